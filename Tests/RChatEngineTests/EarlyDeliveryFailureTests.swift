import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatSQL
import RChatStore
@testable import RChatEngine

/// Deliveries the relay hands over before the engine has taken the connection (they wait in
/// `RelayConnection.early`) go through the same batch as any other: a store that cannot take
/// it stops the engine, acknowledging nothing. Found by DiskFaultTests (`rchat check` on a
/// failing disk said the failure twice): the old code only logged it and ran on without
/// those messages, unacknowledged, so the relay kept them until a reconnect.
final class EarlyDeliveryFailureTests: RelayEngineTestCase {
    /// The real dialer, but the engine hears of the link only once its first delivery has
    /// been posted: every delivery of that connection is early.
    struct LateLinkDialer: RelayDialer {
        let real = ThreadedRelayDialer()

        func dial(_ address: RelayAddress, mailboxKey: SigningKey, stallTimeout: Double,
                  events: @escaping @Sendable (RelayEvent) -> Void, writable: @escaping @Sendable () -> Void,
                  done: @escaping @Sendable (Result<any RelayLink, RelayClientError>) -> Void) {
            let delivered = DispatchSemaphore(value: 0)
            let first = Locked(true)
            real.dial(address, mailboxKey: mailboxKey, stallTimeout: stallTimeout, events: { event in
                events(event)
                if case .delivery = event, first.withLock({ let was = $0; $0 = false; return was }) { delivered.signal() }
            }, writable: writable, done: { result in
                if case .success = result { _ = delivered.wait(timeout: .now() + 10) }
                done(result)
            })
        }
    }

    func testAStoreFailureOnEarlyDeliveriesStopsTheEngine() throws {
        let address = try startRelay()
        let alice = try account("Alice", relay: address), sam = try account("Sam", relay: address)
        _ = try alice.addContact(try sam.identity().contactCode(device: sam.device), name: "Sam")
        _ = try sam.addContact(try alice.identity().contactCode(device: alice.device), name: "Alice")
        let aliceEngine = try startEngine(alice, logged: true), samEngine = try startEngine(sam, logged: true)
        let warmUp = try sam.send(to: "Alice", content: .text("warm-up"))
        samEngine.engine.wake()
        try waitForStatus(sam, "Alice", [warmUp], .delivered)
        XCTAssertTrue(aliceEngine.stop())
        let held = try (1...3).map { try sam.send(to: "Alice", content: .text("held \($0)")) }
        samEngine.engine.wake()
        try waitForStatus(sam, "Alice", held, .sent)
        // Alice's store refuses every new message from now on (as a disk that fails would).
        try Database(path: alice.locations.home + "/" + Store.fileName)
            .execute("CREATE TRIGGER refuse_messages BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
        var environment = EngineEnvironment.system
        environment.dialer = LateLinkDialer()
        let lines = logLines
        let engine = try Engine(account: AccountService(locations: alice.locations), environment: environment) { lines.append("Alice: \($0)") }
        let thread = EngineThread(engine: engine)
        thread.start(name: "engine-alice-early")
        engines.append(thread)
        try untilDeadline("Alice's engine stops at the failed batch", seconds: 15) { thread.failure != nil }
        XCTAssertTrue(thread.failure?.description.contains("refused by the test") ?? false, "\(String(describing: thread.failure))")
        XCTAssertEqual(try messages(alice, "Sam").filter { $0.direction == .incoming }.count, 1, "the warm-up alone")
    }
}
