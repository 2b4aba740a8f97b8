/// Something with output queued during a loop turn, written in one go at the turn's end.
public protocol Flushable: AnyObject {
    /// Set while the object is in a `PendingFlushes` list (so it is listed once).
    var isDirty: Bool { get set }
    func flush()
}

/// The connections of a loop that queued output this turn (uWebSockets' "corked" sockets):
/// each leaves in one write at the end of the turn, however many messages it queued.
/// A class, because flushing one element can mark another while the walk is in progress.
///
/// `mark` runs once per message queued: the methods are inlinable so the using module gets
/// them specialized for its element type (unspecialized, every append looked up the metadata of
/// `Array<Element>` in the runtime, ~300 instructions), and the list is `@exclusivity(unchecked)`:
/// one thread touches it, and no access to it spans a call that could reach it again (`flushAll`
/// reads one element at a time, then calls out).
public final class PendingFlushes<Element: Flushable> {
    @usableFromInline @exclusivity(unchecked) var pending: [Element] = []

    public init() {}

    @inlinable public var isEmpty: Bool { pending.isEmpty }

    @inlinable public func mark(_ element: Element) {
        guard !element.isDirty else { return }
        element.isDirty = true
        pending.append(element)
    }

    /// Flushes every marked element. A flush may mark more (a close queued by the last
    /// write), so the list is walked by index until it ends.
    @inlinable public func flushAll() {
        var index = 0
        while index < pending.count {
            let element = pending[index]
            element.isDirty = false
            element.flush()
            index += 1
        }
        pending.removeAll(keepingCapacity: pending.count <= 4096)
    }
}
