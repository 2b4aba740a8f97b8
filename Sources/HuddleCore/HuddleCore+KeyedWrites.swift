import HuddleProtocol

extension HuddleCore {
    /// A write sent with a `client_id`: the first result again while it is kept, otherwise the
    /// write itself, whose success is kept (logged after the write's own commands, in the same
    /// turn). Refusals are not kept: they changed nothing, so running a retry again is safe and
    /// may succeed (the first attempt may have been refused for a reason that has passed).
    func handleKeyed(
        _ write: Operation, from connection: ConnectionRef, requestID: String, clientID: String,
        at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let op = write.name
        let kept = durableState.keptResults.result(
            of: identity.username, op: op, clientID: clientID, at: time, window: configuration.keptResultMilliseconds)
        if let kept {
            return reply(connection, requestID, .duplicate(kept), into: &step)
        }
        var written = CoreStep()
        handle(write, from: connection, requestID: requestID, clientID: nil, at: time, into: &written)
        step.commands.append(contentsOf: written.commands)
        step.outputs.append(contentsOf: written.outputs)
        guard let result = written.reply(to: connection, requestID: requestID), !result.isFailure else { return }
        record(.keepResult(user: identity.username, op: op, clientID: clientID, reply: result.keptForm, time: time), into: &step)
    }
}

extension CoreStep {
    /// The reply this step sends to `connection` for `requestID`.
    func reply(to connection: ConnectionRef, requestID: String) -> CoreReply? {
        for case let .reply(ref, id, reply) in outputs where ref == connection && id == requestID {
            return reply
        }
        return nil
    }
}

extension CoreReply {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }

    /// The reply as a retry will get it, holding no more than it shows: a memory shown without
    /// its points is kept without them (up to 100 points of a few KiB each).
    var keptForm: CoreReply {
        guard case .memory(let memory, includingPoints: false) = self else { return self }
        var summary = StoredMemory(
            id: memory.id, owner: memory.owner, title: memory.title, date: memory.date, placeName: memory.placeName,
            position: memory.position, createdAt: memory.createdAt)
        summary.updatedAt = memory.updatedAt
        return .keptMemory(summary, pointCount: memory.points.count)
    }
}
