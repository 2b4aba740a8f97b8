import HuddleProtocol

/// Memories (protocol.md, "Memories and photos"): a user's private memories and their points,
/// kept in step across the user's devices.
///
/// Every change is told at once to every live connection of the owner (`memory_changed`), the
/// one that made it included. It is not stored in the inbox: a device that was offline reads
/// `memories` again and compares `updated_at`, which costs one request instead of an inbox
/// flooded by edits. Someone else's memory id is answered exactly like a missing one
/// (`memory_not_found`), so ids reveal nothing.
extension HuddleCore {
    func createMemory(_ connection: ConnectionRef, requestID: String, _ fields: MemoryFields, at time: Int64, into step: inout CoreStep) {
        guard let owner = signedInIdentity(connection, requestID, into: &step)?.username else { return }
        guard let title = fields.title else { return refuseMemoryRequest(connection, requestID, "title is required", into: &step) }
        guard let date = fields.date else { return refuseMemoryRequest(connection, requestID, "date is required", into: &step) }
        var position: MemoryPosition?
        if case .set(let given) = fields.position { position = given.normalized }
        let memory = StoredMemory(
            id: durableState.memories.nextID, owner: owner, title: title, date: date, placeName: fields.placeName ?? "",
            position: position, createdAt: time)
        if let problem = Self.memoryRefusal(of: memory) { return refuseMemoryRequest(connection, requestID, problem, into: &step) }
        guard durableState.memories.count(of: owner) < MemoryLimits.memoriesPerUser else {
            let error = CoreError(.tooManyMemories, "a user keeps at most \(MemoryLimits.memoriesPerUser) memories")
            return fail(connection, requestID, error, into: &step)
        }
        let command = CoreCommand.createMemory(
            owner: owner, id: memory.id, title: memory.title, date: memory.date, placeName: memory.placeName,
            position: memory.position, time: time)
        record(command, into: &step)
        reply(connection, requestID, .memory(durableState.memories[memory.id]!, includingPoints: true), into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    func updateMemory(
        _ connection: ConnectionRef, requestID: String, memory id: UInt64, _ fields: MemoryFields, at time: Int64, into step: inout CoreStep
    ) {
        guard let owner = signedInIdentity(connection, requestID, into: &step)?.username,
              var memory = ownedMemory(id, of: owner, connection, requestID, into: &step)
        else { return }
        if let title = fields.title { memory.title = title }
        if let date = fields.date { memory.date = date }
        if let placeName = fields.placeName { memory.placeName = placeName }
        switch fields.position {
        case nil: break
        case .remove: memory.position = nil
        case .set(let position): memory.position = position.normalized
        }
        if let problem = Self.memoryRefusal(of: memory) { return refuseMemoryRequest(connection, requestID, problem, into: &step) }
        let command = CoreCommand.updateMemory(
            owner: owner, id: id, title: memory.title, date: memory.date, placeName: memory.placeName, position: memory.position,
            time: time)
        record(command, into: &step)
        reply(connection, requestID, .memory(durableState.memories[id]!, includingPoints: false), into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    func deleteMemory(_ connection: ConnectionRef, requestID: String, memory id: UInt64, at time: Int64, into step: inout CoreStep) {
        guard let owner = signedInIdentity(connection, requestID, into: &step)?.username,
              ownedMemory(id, of: owner, connection, requestID, into: &step) != nil
        else { return }
        let command = CoreCommand.deleteMemory(owner: owner, id: id, time: time)
        record(command, into: &step)
        reply(connection, requestID, .done, into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    func listMemories(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let owner = signedInIdentity(connection, requestID, into: &step)?.username else { return }
        reply(connection, requestID, .memories(durableState.memories.memories(of: owner)), into: &step)
    }

    func readMemory(_ connection: ConnectionRef, requestID: String, memory id: UInt64, into step: inout CoreStep) {
        guard let owner = signedInIdentity(connection, requestID, into: &step)?.username,
              let memory = ownedMemory(id, of: owner, connection, requestID, into: &step)
        else { return }
        reply(connection, requestID, .memory(memory, includingPoints: true), into: &step)
    }

    func addMemoryPoint(
        _ connection: ConnectionRef, requestID: String, memory id: UInt64, _ fields: MemoryPointFields, at time: Int64,
        into step: inout CoreStep
    ) {
        guard let owner = signedInIdentity(connection, requestID, into: &step)?.username,
              let memory = ownedMemory(id, of: owner, connection, requestID, into: &step)
        else { return }
        guard let pointTime = fields.time else { return refuseMemoryRequest(connection, requestID, "time is required", into: &step) }
        var position: MemoryPosition?
        if case .set(let given) = fields.position { position = given.normalized }
        let point = MemoryPoint(
            id: memory.nextPointID, time: pointTime, position: position, placeName: fields.placeName ?? "", note: fields.note ?? "",
            photos: fields.photos ?? [])
        guard acceptablePoint(point, of: owner, connection, requestID, into: &step) else { return }
        guard memory.points.count < MemoryLimits.pointsPerMemory else {
            let error = CoreError(.tooManyPoints, "a memory holds at most \(MemoryLimits.pointsPerMemory) points")
            return fail(connection, requestID, error, into: &step)
        }
        storePoint(point, in: id, of: owner, connection, requestID, at: time, into: &step)
    }

    func updateMemoryPoint(
        _ connection: ConnectionRef, requestID: String, memory id: UInt64, point pointID: UInt64, _ fields: MemoryPointFields,
        at time: Int64, into step: inout CoreStep
    ) {
        guard let owner = signedInIdentity(connection, requestID, into: &step)?.username,
              let memory = ownedMemory(id, of: owner, connection, requestID, into: &step)
        else { return }
        guard var point = memory.point(pointID) else {
            return fail(connection, requestID, CoreError(.pointNotFound, "memory \(id) has no point \(pointID)"), into: &step)
        }
        if let pointTime = fields.time { point.time = pointTime }
        switch fields.position {
        case nil: break
        case .remove: point.position = nil
        case .set(let position): point.position = position.normalized
        }
        if let placeName = fields.placeName { point.placeName = placeName }
        if let note = fields.note { point.note = note }
        if let photos = fields.photos { point.photos = photos }
        guard acceptablePoint(point, of: owner, connection, requestID, into: &step) else { return }
        storePoint(point, in: id, of: owner, connection, requestID, at: time, into: &step)
    }

    func deleteMemoryPoint(
        _ connection: ConnectionRef, requestID: String, memory id: UInt64, point pointID: UInt64, at time: Int64, into step: inout CoreStep
    ) {
        guard let owner = signedInIdentity(connection, requestID, into: &step)?.username,
              let memory = ownedMemory(id, of: owner, connection, requestID, into: &step)
        else { return }
        guard memory.point(pointID) != nil else {
            return fail(connection, requestID, CoreError(.pointNotFound, "memory \(id) has no point \(pointID)"), into: &step)
        }
        let command = CoreCommand.deleteMemoryPoint(owner: owner, memory: id, point: pointID, time: time)
        record(command, into: &step)
        reply(connection, requestID, .done, into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    // MARK: Helpers

    private func storePoint(
        _ point: MemoryPoint, in id: UInt64, of owner: Username,
        _ connection: ConnectionRef, _ requestID: String, at time: Int64, into step: inout CoreStep
    ) {
        let command = CoreCommand.putMemoryPoint(owner: owner, memory: id, point: point, time: time)
        let prior = priorFacts(of: command)
        record(command, into: &step)
        reply(connection, requestID, .memoryPoint(memory: id, point), into: &step)
        tellLive(after: command, prior: prior, at: time, into: &step)
    }

    /// The caller's memory with this id. Otherwise nil, having replied `memory_not_found` —
    /// also for someone else's memory, which the caller must not learn exists.
    private func ownedMemory(_ id: UInt64, of owner: Username, _ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep) -> StoredMemory? {
        guard let memory = durableState.memories[id], memory.owner == owner else {
            fail(connection, requestID, CoreError(.memoryNotFound, "you have no memory \(id)"), into: &step)
            return nil
        }
        return memory
    }

    /// Whether the point keeps the rules and names only photos its owner uploaded; otherwise
    /// false, having replied `bad_request` or `photo_not_found`.
    private func acceptablePoint(_ point: MemoryPoint, of owner: Username, _ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep) -> Bool {
        if let problem = MemoryRules.timeRefusal(point.time) ?? point.position?.refusal ?? MemoryRules.placeNameRefusal(point.placeName)
            ?? MemoryRules.noteRefusal(point.note) ?? MemoryRules.photosRefusal(point.photos)
        {
            refuseMemoryRequest(connection, requestID, problem, into: &step)
            return false
        }
        if let missing = point.photos.first(where: { !durableState.photos.owns(owner, $0) }) {
            fail(connection, requestID, CoreError(.photoNotFound, "you have not uploaded photo \(missing)"), into: &step)
            return false
        }
        return true
    }

    /// Why a memory's own fields break the rules, or nil.
    private static func memoryRefusal(of memory: StoredMemory) -> String? {
        MemoryRules.titleRefusal(memory.title) ?? MemoryRules.dateRefusal(memory.date) ?? MemoryRules.placeNameRefusal(memory.placeName)
            ?? memory.position?.refusal
    }

    private func refuseMemoryRequest(_ connection: ConnectionRef, _ requestID: String, _ problem: String, into step: inout CoreStep) {
        fail(connection, requestID, CoreError(.badRequest, problem), into: &step)
    }
}
