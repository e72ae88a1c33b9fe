import Synchronization

/// A `Mutex` that closures can share: `Mutex` cannot be copied, so an escaping closure
/// (an event handler called on another thread) holds this reference to one instead.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    public func withLock<Result: Sendable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in try body(&value) }
    }
}
