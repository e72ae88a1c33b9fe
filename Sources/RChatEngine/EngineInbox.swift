import Foundation
import RChatCore
import RChatRelayClient
import RChatWire
import RChatStore

/// Everything that reaches the engine thread, in arrival order: relay events (from each
/// connection's reader thread), finished connection attempts, local wake-ups.
///
/// `@unchecked Sendable`: `items` is guarded by `condition`, an `NSCondition` because the
/// engine thread waits on it (`Mutex` has no wait), and is touched nowhere else.
final class EngineInbox: @unchecked Sendable {
    enum Item {
        /// A relay event other than a delivery.
        case relay(RelayAddress, generation: UInt64, RelayEvent)
        case delivery(RelayAddress, generation: UInt64, Inbound)
        case connected(RelayAddress, generation: UInt64, any RelayLink)
        case connectFailed(RelayAddress, generation: UInt64, String)
        /// The connection's backlog of unwritten bytes is down again (`RelayClient.hasRoom`).
        case writable(RelayAddress, generation: UInt64)
        /// The WAL sync thread made durable every commit before its request `n` (`WALSync`).
        case durable(Result<UInt64, StoreError>)
        /// Look at the store: `byCommand` when another process (a command) asked, through
        /// the local wake-up; false when this process's own view did.
        case wake(byCommand: Bool)
        /// The user asked to reconnect now (`/reconnect`).
        case reconnect
        case stop
    }

    private let condition = NSCondition()
    private var items: [Item] = []
    /// The engine stopped: nothing more is taken.
    private var closed = false

    func post(_ item: Item) {
        condition.lock()
        if closed {
            condition.unlock()
            // A connection that finished after the engine stopped would hold the mailbox's
            // handover with nobody reading it: it is closed instead.
            if case .connected(_, _, let link) = item { link.close() }
            return
        }
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    /// The engine stopped: what is posted from now on is dropped, and connections that
    /// finish are closed. Returns what was still queued.
    func close() -> [Item] {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        let left = items
        items.removeAll()
        return left
    }

    /// Whether something is queued (a backlog is coming in).
    var hasItems: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !items.isEmpty
    }

    /// Everything queued, without waiting.
    func takeNow() -> [Item] {
        condition.lock()
        defer { condition.unlock() }
        let taken = items
        items.removeAll(keepingCapacity: true)
        return taken
    }

    /// Everything queued, waiting until `deadline` if nothing is.
    func take(until deadline: Date) -> [Item] {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty {
            if !condition.wait(until: deadline) { break }
        }
        let taken = items
        items.removeAll(keepingCapacity: true)
        return taken
    }
}

/// A delivery as it reaches the engine thread, with the envelope its reader thread opened
/// if it could (`EnvelopeKeyring`). One object, so that handing it along moves a reference
/// instead of copying each of its fields (a backlog brings thousands at a time).
final class Inbound: Sendable {
    let delivery: Delivery
    let opened: OpenedEnvelope?

    init(_ delivery: Delivery, opened: OpenedEnvelope?) {
        self.delivery = delivery
        self.opened = opened
    }
}
