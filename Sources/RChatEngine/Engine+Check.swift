import Foundation
import RChatCore
import RChatRelayClient
import RChatStore

extension Engine {
    /// `rchat check`, the background check (seed 001 "How it works"): connect to every relay
    /// this account uses, prove the mailbox, collect what the relays held, store it with the
    /// saved state (acknowledging each batch only after its commit), then disconnect. It
    /// pairs nothing and sends nothing: no codes, no receipts, no cover traffic. Delivered
    /// receipts for what it stored are owed in the store and go at the next sync or view.
    ///
    /// Returns the messages stored, in arrival order, for the alerts.
    public func runCheck(timeout: Double = 20) throws(EngineError) -> [(contact: String, id: MessageID)] {
        checkOnly = true
        var arrived: [(contact: String, id: MessageID)] = []
        let collected = NSLock()
        nonisolated(unsafe) var events: [ChatEvent] = []
        onEvent = { event in collected.withLock { events.append(event) } }
        defer { shutDownCheck() }
        try reloadConversations()
        let end = Date(timeIntervalSinceNow: timeout)
        connectWhereNeeded()
        while Date() < end {
            let relays = neededRelays
            let settled = relays.allSatisfy { address in
                drainedRelays.contains(address) || (connections[address].map { !$0.connecting && $0.client == nil } ?? false)
            }
            if settled { break }
            let items = inbox.take(until: min(end, Date(timeIntervalSinceNow: 0.5)))
            var deliveries: [Arrival] = []
            for item in items {
                switch item {
                case let .connected(address, generation, client):
                    connected(address, generation, client)
                case let .connectFailed(address, generation, reason):
                    connectFailed(address, generation, reason)
                    // One attempt per check: a relay that cannot be reached is visited next time.
                    connections[address]?.retryAt = .distantFuture
                case let .delivery(address, generation, inbound):
                    guard let connection = connections[address], connection.generation == generation else { continue }
                    if connection.client == nil { connection.early.append(.delivery(inbound.delivery)); continue }
                    deliveries.append((connection, inbound))
                case let .relay(address, generation, event):
                    guard let connection = connections[address], connection.generation == generation else { continue }
                    if connection.client == nil { connection.early.append(event); continue }
                    if !deliveries.isEmpty { try handleDeliveries(deliveries); deliveries.removeAll() }
                    try handle(event, on: connection)
                case .durable(let result):
                    try finishDurable(result)
                case .wake, .stop, .writable:
                    break // the check sends nothing but acknowledgements
                }
            }
            if !deliveries.isEmpty { try handleDeliveries(deliveries) }
            publishKeyringIfNeeded()
        }
        for event in collected.withLock({ events }) {
            if case let .newMessage(contact, id, _) = event { arrived.append((contact, id)) }
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
