import Foundation
import Glibc
import RChatCore
import RChatCrypto
import RChatNet
@testable import RChatRelay
import XCTest

/// The held bucket's reads and writes against a real JetStream server (`TallyBucket`): a
/// write whose answer was lost and is sent again is stored once and answered with its
/// revision (JetStream's duplicate detection comes before its compare-and-set), a write on
/// an old revision is a conflict, and a read gives the leader's entry.
final class TallyBucketTests: XCTestCase {
    private var server: Process?
    private var directory: URL?
    private var link: ClusterLink?

    override func setUpWithError() throws {
        guard let natsServer = ["/usr/sbin/nats-server", "/usr/bin/nats-server"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("nats-server is not installed")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-tally-bucket-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        directory = dir
        let port = LoopbackPort.free()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: natsServer)
        process.arguments = ["-js", "-a", "127.0.0.1", "-p", "\(port)", "-sd", dir.appendingPathComponent("store").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        server = process
        var key = Random.bytes(32)
        let naming = SecretBytes(consuming: &key)
        let deadline = Date(timeIntervalSinceNow: 20)
        while link == nil {
            link = try? ClusterLink(servers: ["nats://127.0.0.1:\(port)"], configuration: RelayConfiguration(keyFile: ""),
                                    inbox: ClusterInbox(wake: {}), tallyNamingKey: naming)
            if link == nil {
                guard Date() < deadline else { throw XCTSkip("nats-server did not answer") }
                usleep(50_000)
            }
        }
    }

    override func tearDown() {
        link?.close()
        link = nil
        if let server, server.isRunning {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    private func tally(_ bytes: Int) -> HeldTally {
        var t = HeldTally()
        t.count(bytes, heldAt: 1_800_000_000)
        return t
    }

    func testAWriteSentAgainIsStoredOnceAndAStaleOneConflicts() throws {
        let bucket = try XCTUnwrap(link?.tallyBucket)
        let never = { false }
        XCTAssertEqual(bucket.read("k")?.revision, 0, "a missing key reads as a fresh tally at revision 0")
        XCTAssertEqual(bucket.read("k")?.tally, HeldTally())

        guard case .revision(let r1) = bucket.write("k", tally(100), after: 0, id: "a.1", stop: never) else { return XCTFail("first write") }
        XCTAssertEqual(bucket.write("k", tally(100), after: 0, id: "a.1", stop: never), .revision(r1),
                       "the same publish again (its answer lost): a duplicate, answered with the revision it was stored at")
        XCTAssertEqual(bucket.write("k", tally(300), after: 0, id: "b.1", stop: never), .conflict, "another write on the old revision")
        XCTAssertEqual(bucket.read("k")?.revision, r1)
        XCTAssertEqual(bucket.read("k")?.tally, tally(100), "stored once")

        guard case .revision(let r2) = bucket.write("k", tally(200), after: r1, id: "a.2", stop: never) else { return XCTFail("second write") }
        guard case .revision(let r3) = bucket.write("k", tally(50), after: r2, id: "b.2", stop: never) else { return XCTFail("other node's write") }
        XCTAssertEqual(bucket.write("k", tally(200), after: r1, id: "a.2", stop: never), .revision(r2),
                       "sent again after another node wrote on top of it: still recognised as stored, not applied again")
        XCTAssertEqual(bucket.read("k")?.revision, r3)
        XCTAssertEqual(bucket.read("k")?.tally, tally(50))
        XCTAssertEqual(bucket.write("k", tally(999), after: r2, stop: never), .conflict)
        XCTAssertEqual(bucket.read("k")?.tally, tally(50), "a conflicting write stores nothing")
    }

    func testTheDuplicatesWindowCoversEveryResend() throws {
        let window = try XCTUnwrap(link?.tallyBucket.duplicatesWindow())
        XCTAssertGreaterThan(window, TallyBucket.resendFor, "an unanswered write is sent again only while JetStream still recognises it")
    }
}
