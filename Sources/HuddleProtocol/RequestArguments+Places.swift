/// The argument kinds of the places and location ops (protocol.md, "Places and location").
extension RequestArguments {
    /// Any JSON number, as a `Double` (coordinates, metres). Its range is the core's to judge;
    /// a literal too large for a `Double` becomes an infinity, which every range refuses.
    func number(_ name: StaticString) throws(RequestError) -> Double {
        guard let value = value(name) else { throw badRequest("\(name) is required") }
        guard let number = value.doubleValue else { throw badRequest("\(name) must be a number") }
        return number
    }

    /// A place id: an integer of at least 1.
    func positiveInteger(_ name: StaticString) throws(RequestError) -> UInt64 {
        guard let value = value(name) else { throw badRequest("\(name) is required") }
        guard let integer = value.uint64Value, integer > 0 else { throw badRequest("\(name) must be a positive integer") }
        return integer
    }

    func optionalPositiveInteger(_ name: StaticString) throws(RequestError) -> UInt64? {
        guard let value = value(name), value != .null else { return nil }
        return try positiveInteger(name)
    }

    /// A time the phone took: milliseconds since the Unix epoch, a non-negative integer.
    func milliseconds(_ name: StaticString) throws(RequestError) -> Int64 {
        guard let value = value(name) else { throw badRequest("\(name) is required") }
        guard let time = value.int64Value, time >= 0 else {
            throw badRequest("\(name) must be a non-negative integer (milliseconds since the Unix epoch)")
        }
        return time
    }

    /// `region`'s `event`: `"enter"` (true) or `"exit"` (false).
    func regionEvent() throws(RequestError) -> Bool {
        switch try string("event") {
        case "enter": return true
        case "exit": return false
        default: throw badRequest("event must be \"enter\" or \"exit\"")
        }
    }
}
