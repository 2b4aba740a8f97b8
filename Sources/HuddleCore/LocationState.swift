/// Where the server has decided a user is, and the evidence the next decision builds on
/// (durable; one per user who ever reported a location).
public struct LocationState: Sendable, Equatable {
    /// What friends see.
    public enum Current: Sendable, Equatable {
        case unknown
        case traveling
        case place(id: UInt64)
    }

    public var current: Current = .unknown
    /// When `current` began (the observation's time, never later than the server's); nil
    /// before the first decision.
    public var since: Int64?
    /// The newest accepted observation (fix or region event): anything not newer is ignored.
    public var lastObservationTime: Int64?
    /// The last accepted fixes, oldest first, at most `LocationRules.trackLength`: the speed
    /// evidence for `traveling`. A region event clears it (the phone says where the user is;
    /// speeds measured before that would mislead).
    public var track: [LocationFix] = []
    /// The time of the newest fix that ended a fast interval, while that evidence matters.
    public var lastFastTime: Int64?

    public init() {}

    public init(current: Current, since: Int64?, lastObservationTime: Int64?, track: [LocationFix], lastFastTime: Int64?) {
        self.current = current
        self.since = since
        self.lastObservationTime = lastObservationTime
        self.track = track
        self.lastFastTime = lastFastTime
    }
}
