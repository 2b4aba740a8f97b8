import HuddleClient
import HuddleProtocol

/// Your memories: days remembered, with points along them. Private: only you see them; a change
/// made on another of your devices shows live as a `[memory]` line. Photos go over HTTP
/// (protocol.md, "Photos (HTTP)") and are not handled here: points show how many they have.
extension ChatCommand {
    static let memoryCommands: [ChatCommand] = [
        ChatCommand("memories", summary: "your memories, the newest day first: id, date, title, points") { app, _, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.memories { outcome in app.report(outcome, done, success: ChatLines.memories) }
        },
        ChatCommand("memory", ["ID"], summary: "memory ID and its points") { app, arguments, done in
            guard app.requireSignIn() != nil, let id = memoryID(app, arguments[0]) else { return done() }
            app.client.memory(id) { outcome in
                app.report(outcome, done) { memory in
                    app.show("[memory] " + ChatLines.memory(memory))
                    let points = memory.points ?? []
                    for point in points { app.show("[point \(memory.id).\(point.id)] " + ChatLines.point(point)) }
                    return points.isEmpty ? "[memory] no points yet: /point \(memory.id) NOTE" : nil
                }
            }
        },
        ChatCommand("memory-new", ["DATE"], rest: "TITLE", restIsRequired: true, summary: "a new memory of the day DATE (YYYY-MM-DD)") {
            app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.createMemory(title: arguments[1], date: arguments[0]) { outcome in
                if case .success(let memory) = outcome { app.memoryEchoes.expect(MemoryEchoes.key(.created(memory))) }
                app.report(outcome, done) { memory in ChatLines.ok("memory \(ChatLines.memory(memory)); /point \(memory.id) NOTE adds a point") }
            }
        },
        ChatCommand("memory-delete", ["ID"], summary: "delete memory ID and its points") { app, arguments, done in
            guard app.requireSignIn() != nil, let id = memoryID(app, arguments[0]) else { return done() }
            app.client.deleteMemory(id) { outcome in
                if case .success = outcome { app.memoryEchoes.expect(MemoryEchoes.key(.deleted(memory: id))) }
                app.report(outcome, done) { _ in ChatLines.ok("memory \(id) deleted") }
            }
        },
        ChatCommand("point", ["ID"], rest: "NOTE", restIsRequired: true, summary: "a point of memory ID, now, with NOTE") { app, arguments, done in
            guard app.requireSignIn() != nil, let id = memoryID(app, arguments[0]) else { return done() }
            app.client.addPoint(to: id, time: ChatClock.nowMilliseconds(), note: arguments[1]) { outcome in
                if case .success(let point) = outcome { app.memoryEchoes.expect(MemoryEchoes.Key(action: "point_added", memory: id, point: point.id)) }
                app.report(outcome, done) { point in ChatLines.ok("point \(id).\(point.id) added: " + ChatLines.point(point)) }
            }
        },
    ]

    /// `word` as a memory id, or an error line and nil.
    private static func memoryID(_ app: ChatApp, _ word: String) -> UInt64? {
        guard let id = CommandArguments.id(word) else {
            app.show(ChatLines.badArgument("\(ChatLines.quoted(word)) is not a memory number (/memories shows them)"))
            return nil
        }
        return id
    }
}
