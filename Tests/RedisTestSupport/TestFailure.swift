/// A test's failure in plain words (the test targets that start processes each had one; this is
/// the Redis tests' and the support's).
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
