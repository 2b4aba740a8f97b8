/// A value that belongs to one event loop. It may travel to other threads — inside the closures
/// they hand the loop, in the lists of a thread-safe object — but only the loop's thread reads or
/// changes it, which debug builds check (`EventLoop.assertInLoop`). What a loop-confined class
/// used to promise in a comment next to `@unchecked Sendable`, checked where it is touched.
///
/// Made on any thread: the value is handed to the loop with it (the maker keeps no other use
/// of it), or made before the loop runs, when whoever sets the loop up owns it.
// Sendable: every access to `confined` asserts it runs on `loop`'s thread.
public final class LoopBound<Value>: @unchecked Sendable {
    public let loop: EventLoop
    private var confined: Value

    public init(_ value: Value, loop: EventLoop) {
        self.loop = loop
        confined = value
    }

    /// The value; only on the loop's thread.
    public var value: Value {
        get {
            loop.assertInLoop()
            return confined
        }
        set {
            loop.assertInLoop()
            confined = newValue
        }
    }

    /// Runs `body` with the value on the loop's thread; callable from any thread.
    public func execute(_ body: @escaping @Sendable (Value) -> Void) {
        loop.execute { body(self.value) }
    }
}
