import Foundation
import Glibc
import RChatCore
import RChatCrypto
@testable import RChatRelay
import RChatWire
import Synchronization
import XCTest

/// A handed-over recipient's tally is zeroed only when nothing was written to it for a while
/// after it was read (`ClusterTallies.settle`), on two nodes' tallies over one real
/// JetStream bucket: zeroed at once, it wiped a frame another node had counted but not yet
/// published (ClusterSharesTests took 17 cover frames of a quota of 16 under make test).
final class ClusterTalliesSettleTests: NatsServersTestCase {
    override var nodeCount: Int { 2 }

    private let mailbox = MailboxID(publicKey: [UInt8](repeating: 3, count: 32))
    /// What the tallies reported, from their workers.
    private final class Seen: Sendable {
        let steps = Mutex<[ClusterTallies.Settled]>([])
        let published = Atomic<Int>(0)
    }
    private let seen = Seen()

    private func tallies(_ node: Int, settling: Double) throws -> ClusterTallies {
        var key = [UInt8](repeating: 9, count: 32)
        return ClusterTallies(bucket: try bucket(node), limits: HeldLimits(RelayConfiguration(keyFile: "")), namingKey: SecretBytes(consuming: &key),
                              settling: settling, publish: { [seen] _ in seen.published.add(1, ordering: .relaxed); return nil },
                              answer: { _, _ in }, observe: { [seen] _, step in seen.steps.withLock { $0.append(step) } })
    }

    /// Holds one frame of 1000 bytes for the mailbox and waits until it is counted.
    private func hold(_ tallies: ClusterTallies) {
        let before = seen.published.load(ordering: .relaxed)
        tallies.hold(.init(charge: .conversation(bytes: 1000), heldAt: Int64(Date().timeIntervalSince1970), keys: [.recipient(mailbox)],
                           live: false, subject: "s", data: [], token: 1))
        XCTAssertNotNil(poll(timeout: 10) { self.seen.published.load(ordering: .relaxed) > before ? true : nil }, "counted, then published")
    }

    private func next(after count: Int) -> ClusterTallies.Settled? {
        poll(timeout: 20) { self.seen.steps.withLock { $0.count > count ? $0[count] : nil } }
    }

    private func held(_ node: Int) throws -> Int {
        var key = [UInt8](repeating: 9, count: 32)
        let name = TallyKey.recipient(mailbox).name(hiding: SecretBytes(consuming: &key))
        return try XCTUnwrap(bucket(node).read(name)).tally.total(now: Int64(Date().timeIntervalSince1970), holdSeconds: 3600).bytes
    }

    func testATallyLeftQuietIsZeroed() throws {
        let first = try tallies(0, settling: 0.2)
        defer { first.finish() }
        hold(first)
        first.settle(mailbox, mark: ClusterTallies.QuietMark())
        guard case .read(let revision)? = next(after: 0) else { return XCTFail("read first") }
        XCTAssertGreaterThan(revision, 0)
        XCTAssertEqual(next(after: 1), .zeroed)
        XCTAssertEqual(try held(1), 0, "what a failure left counted stops counting")
    }

    func testAFrameAnotherNodeCountedMeanwhileStaysCounted() throws {
        let first = try tallies(0, settling: 1), second = try tallies(1, settling: 1)
        defer { first.finish(); second.finish() }
        hold(first)
        first.settle(mailbox, mark: ClusterTallies.QuietMark())
        guard case .read? = next(after: 0) else { return XCTFail("read first") }
        hold(second)
        XCTAssertEqual(next(after: 1), .writtenMeanwhile)
        XCTAssertEqual(try held(0), 2000, "both frames still count")
    }

    func testAHandoverHandedMoreIsNotZeroed() throws {
        let first = try tallies(0, settling: 0.5)
        defer { first.finish() }
        hold(first)
        let mark = ClusterTallies.QuietMark()
        first.settle(mailbox, mark: mark)
        guard case .read? = next(after: 0) else { return XCTFail("read first") }
        mark.broken()
        XCTAssertEqual(next(after: 1), .broken)
        XCTAssertEqual(try held(1), 1000)
    }
}

/// `body`'s first non-nil answer within `timeout` seconds.
private func poll<T>(timeout: Double, _ body: () -> T?) -> T? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    repeat {
        if let value = body() { return value }
        usleep(10_000)
    } while Date() < deadline
    return nil
}
