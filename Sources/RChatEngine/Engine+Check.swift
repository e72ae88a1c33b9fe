import Foundation
import Synchronization
import RChatCore
import RChatRelayClient
import RChatStore

extension Engine {
    /// `rchat check`, the background check (README, "Alerts and the background check"): connect to every relay
    /// this account uses, prove the mailbox, collect what the relays held, store it with the
    /// saved state (acknowledging each batch only after its commit), then disconnect. It
    /// pairs nothing and sends nothing: no codes, no receipts, no cover traffic. Delivered
    /// receipts for what it stored are owed in the store and go at the next sync or view.
    ///
    /// Returns the messages stored, in arrival order, for the alerts.
    public func runCheck(timeout: Double = 20) throws(EngineError) -> [(conversation: ConversationID, id: MessageID)] {
        policy = .check
        var arrived: [(conversation: ConversationID, id: MessageID)] = []
        let collected = Mutex<[ChatEvent]>([])
        onEvent = { event in collected.withLock { $0.append(event) } }
        thread.claim()
        defer {
            shutDownCheck()
            thread.release()
        }
        try begin()
        let end = ticks + timeout
        while ticks < end {
            let settled = neededRelays.allSatisfy { address in
                connections.drained.contains(address) || (connections[address].map { !$0.connecting && $0.client == nil } ?? false)
            }
            if settled { break }
            let wait = min(end, ticks + 0.5) - ticks
            try turn(inbox.take(until: Date(timeIntervalSinceNow: max(0, wait))))
        }
        for event in collected.withLock({ $0 }) {
            if case let .newMessage(conversation, id, _, _, _) = event { arrived.append((conversation, id)) }
        }
        return arrived
    }

    private func shutDownCheck() {
        for connection in connections.values {
            connection.client?.close()
            connection.client = nil
        }
    }
}
