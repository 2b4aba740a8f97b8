import HuddleProtocol

/// protocol.md "Memories and photos": the caller's private memories and their points. Every
/// change reaches all of the caller's live connections as `HuddleEvent.memory` (this one too,
/// after the reply), so other devices follow. Photos do not travel over the WebSocket: upload
/// them with `PUT /api/v1/photos` and fetch them with `GET /api/v1/photos/HASH` over HTTP on
/// the same port, with the session token as `Authorization: Bearer` (protocol.md, "Photos
/// (HTTP)"); a point names them by the hashes the upload returns. Changes wait in the outbox
/// with a `client_id` and are resent after a drop until answered, done once.
extension HuddleClient {
    /// `memory_create`: a new memory of the day `date` (`YYYY-MM-DD`), with no points yet.
    public func createMemory(
        title: String, date: String, placeName: String? = nil, position: MemoryPosition? = nil,
        completion: @escaping (Result<Memory, HuddleClientError>) -> Void
    ) {
        let fields = MemoryArguments(title: title, date: date, placeName: placeName, position: MemoryPositionChange(position).argument)
        request(.memoryCreate(fields), reading: ReplyResult.memory(in:), completion: completion)
    }

    /// `memory_update`: the fields given change, the others stay (at least one must be given).
    /// The result has no points.
    public func updateMemory(
        _ id: UInt64, title: String? = nil, date: String? = nil, placeName: String? = nil, position: MemoryPositionChange = .keep,
        completion: @escaping (Result<Memory, HuddleClientError>) -> Void
    ) {
        let fields = MemoryArguments(title: title, date: date, placeName: placeName, position: position.argument)
        request(.memoryUpdate(memory: id, fields), reading: ReplyResult.memory(in:), completion: completion)
    }

    /// `memory_delete`: the memory and its points (its photos stay the caller's).
    public func deleteMemory(_ id: UInt64, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.memoryDelete(memory: id), decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }

    /// `memories`: the caller's memories without their points, the newest `date` first.
    public func memories(completion: @escaping (Result<[Memory], HuddleClientError>) -> Void) {
        request(.memories, resendAfterReconnect: true, reading: ReplyResult.memories(in:), completion: completion)
    }

    /// `memory`: one of the caller's memories with its points.
    public func memory(_ id: UInt64, completion: @escaping (Result<Memory, HuddleClientError>) -> Void) {
        request(.memory(memory: id), resendAfterReconnect: true, reading: ReplyResult.memory(in:), completion: completion)
    }

    /// `point_add`: a point of memory `memory` at `time` (ms since the Unix epoch); `photos` are
    /// hashes of photos the caller uploaded.
    public func addPoint(
        to memory: UInt64, time: Int64, position: MemoryPosition? = nil, placeName: String? = nil, note: String? = nil,
        photos: [String]? = nil, completion: @escaping (Result<MemoryPoint, HuddleClientError>) -> Void
    ) {
        let fields = MemoryPointArguments(
            time: time, position: MemoryPositionChange(position).argument, placeName: placeName, note: note, photos: photos)
        request(.pointAdd(memory: memory, fields), reading: Self.point(in:), completion: completion)
    }

    /// `point_update`: the fields given change (`photos` replaces the list), at least one.
    public func updatePoint(
        _ point: UInt64, of memory: UInt64, time: Int64? = nil, position: MemoryPositionChange = .keep, placeName: String? = nil,
        note: String? = nil, photos: [String]? = nil, completion: @escaping (Result<MemoryPoint, HuddleClientError>) -> Void
    ) {
        let fields = MemoryPointArguments(time: time, position: position.argument, placeName: placeName, note: note, photos: photos)
        request(.pointUpdate(memory: memory, point: point, fields), reading: Self.point(in:), completion: completion)
    }

    /// `point_delete`.
    public func deletePoint(_ point: UInt64, of memory: UInt64, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.pointDelete(memory: memory, point: point), decode: { _ throws(HuddleClientError) in () },
                completion: completion)
    }

    private static func point(in result: JSONValue) throws(WireFormatError) -> MemoryPoint {
        try ReplyResult.memoryPoint(in: result).point
    }
}
