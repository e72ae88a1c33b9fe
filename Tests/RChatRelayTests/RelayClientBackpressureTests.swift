import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import Synchronization
import XCTest

/// A relay that stops reading (SIGSTOP: its socket buffers fill and stay full) must cost the
/// client a connection, never a thread: sends return at once, what is queued is bounded, and
/// a connection that makes no progress is given up.
final class RelayClientBackpressureTests: XCTestCase {
    var relay: RelayProcess!

    override func setUp() { relay = RelayProcess() }

    override func tearDown() {
        if let pid = relay.pid { kill(pid, SIGCONT) }
        relay = nil
    }

    /// A payload as large as a frame may carry, to fill buffers quickly.
    let payload = [UInt8](repeating: 0x5A, count: RelayProtocol.maximumPayloadBytes)
    let token = InviteToken(bytes: Random.bytes(InviteToken.byteCount))!

    func frozenRelayClient(stallTimeout: Double, whenWritable: (@Sendable () -> Void)? = nil) throws -> RelayClient {
        let address = try relay.start()
        let client = try RelayClient.connect(to: address, mailboxKey: .generate(), stallTimeout: stallTimeout, whenWritable: whenWritable)
        XCTAssertEqual(client.nextEvent(timeout: 5), .drained)
        kill(try XCTUnwrap(relay.pid), SIGSTOP)
        return client
    }

    /// The old client wrote with a blocking `send`: its sending thread stopped for good
    /// once the kernel's buffers were full.
    func testSendsNeverWaitAndTheQueueBoundGivesTheConnectionUp() throws {
        let client = try frozenRelayClient(stallTimeout: 600)
        var queuedAtRefusal: Int?
        var slowest = 0.0
        var hadRoom = true
        for _ in 0..<2_000 {
            hadRoom = hadRoom && client.hasRoom()
            let started = monotonic()
            do {
                try client.sendRequest(to: token, payload)
            } catch {
                guard case RelayClientError.connectionLost(let reason) = error, reason.hasPrefix("the relay stopped reading (") else {
                    XCTFail("\(error)")
                    break
                }
                queuedAtRefusal = Int(reason.dropFirst("the relay stopped reading (".count).prefix { $0.isNumber })
                break
            }
            slowest = max(slowest, monotonic() - started)
        }
        XCTAssertLessThan(slowest, 0.5, "a send never waits for the relay")
        XCTAssertFalse(hadRoom, "hasRoom says no once the backlog is over \(RelayClient.backlogBytes) bytes")
        let queued = try XCTUnwrap(queuedAtRefusal, "the queue bound ends the connection")
        XCTAssertGreaterThan(queued, RelayClient.maximumQueuedBytes)
        XCTAssertLessThanOrEqual(queued, RelayClient.maximumQueuedBytes + RelayProtocol.maximumFrameBytes + 64)
        XCTAssertEqual(try closedEvent(client), .closed(.connectionLost("the relay stopped reading (\(queued) bytes waiting)")))
        XCTAssertThrowsError(try client.ping(), "nothing more is queued after the connection is given up")
    }

    /// Less than the bound is queued, but the relay takes none of it for the stall timeout.
    func testARelayThatTakesNothingForTheStallTimeoutIsGivenUp() throws {
        let client = try frozenRelayClient(stallTimeout: 1)
        let started = monotonic()
        while client.hasRoom() { try client.sendRequest(to: token, payload) }
        let event = try closedEvent(client, timeout: 10)
        guard case .closed(.connectionLost(let reason))? = event else { return XCTFail("\(String(describing: event))") }
        XCTAssertTrue(reason.hasPrefix("the relay read nothing for 1 s"), reason)
        XCTAssertLessThan(monotonic() - started, 8)
    }

    /// The relay reads again: the backlog goes, `whenWritable` is called once, and there is
    /// room again — on the same connection.
    func testWhenTheRelayReadsAgainTheBacklogGoesAndTheSenderIsToldOnce() throws {
        let told = Atomic<Int>(0)
        let client = try frozenRelayClient(stallTimeout: 600, whenWritable: { told.add(1, ordering: .relaxed) })
        var sent = 0
        while client.hasRoom() { try client.sendRequest(to: token, payload); sent += 1 }
        XCTAssertGreaterThanOrEqual(client.queuedBytes, RelayClient.backlogBytes)
        XCTAssertEqual(told.load(ordering: .relaxed), 0)
        kill(try XCTUnwrap(relay.pid), SIGCONT)
        let deadline = Date(timeIntervalSinceNow: 20)
        while told.load(ordering: .relaxed) == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(told.load(ordering: .relaxed), 1, "whenWritable once the backlog is down to half")
        XCTAssertTrue(client.hasRoom())
        // Every request reached the relay, which answers each (nobody registered the token).
        var refused = 0
        while refused < sent, let event = client.nextEvent(timeout: 10) {
            if case .refused(_, .unknownInvite) = event { refused += 1 } else { XCTFail("unexpected \(event)"); break }
        }
        XCTAssertEqual(refused, sent)
        XCTAssertFalse(client.isClosed)
        client.close()
    }

    func closedEvent(_ client: RelayClient, timeout: Double = 5) throws -> RelayEvent? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while let event = client.nextEvent(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if case .closed = event { return event }
        }
        return nil
    }

    func monotonic() -> Double { ProcessInfo.processInfo.systemUptime }
}
