/// Help and leaving.
extension ChatCommand {
    static let generalCommands: [ChatCommand] = [
        ChatCommand("help", summary: "this list") { app, _, done in
            for group in CommandTable.groups {
                for command in group.commands {
                    app.show("[help] \(command.usage) — \(command.summary)")
                }
            }
            app.show("[help] anything else is sent to the open chat (start it with // to send a leading /)")
            done()
        },
        ChatCommand("quit", summary: "leave (your session is kept for next time)") { app, _, _ in
            app.quit()
        },
    ]
}
