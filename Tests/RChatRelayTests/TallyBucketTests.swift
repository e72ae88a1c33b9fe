import Foundation
import Glibc
import RChatCore
import RChatCrypto
import RChatNet
@testable import RChatRelay
import Synchronization
import XCTest

/// `count` routed `nats-server -js` processes under `directory` (one alone when 1), and a
/// `ClusterLink` to them for each of `links` nodes, each listing a different server first.
private struct NatsServers {
    let processes: [Process]
    let links: [ClusterLink]

    init(count: Int, links nodes: Int, in directory: URL) throws {
        guard let natsServer = ["/usr/sbin/nats-server", "/usr/bin/nats-server"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("nats-server is not installed")
        }
        let ports = (0..<count).map { _ in LoopbackPort.free() }, routes = (0..<count).map { _ in LoopbackPort.free() }
        var processes: [Process] = []
        for i in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: natsServer)
            process.arguments = ["-js", "-a", "127.0.0.1", "-p", "\(ports[i])", "-n", "nats-\(i)", "-sd", directory.appendingPathComponent("store-\(i)").path]
                + (count == 1 ? [] : ["--cluster_name", "rchat-test", "--cluster", "nats://127.0.0.1:\(routes[i])",
                                      "--routes", routes.enumerated().filter { $0.offset != i }.map { "nats://127.0.0.1:\($0.element)" }.joined(separator: ",")])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            processes.append(process)
        }
        self.processes = processes
        var key = Random.bytes(32)
        let naming = SecretBytes(consuming: &key)
        var links: [ClusterLink] = []
        for first in 0..<nodes {
            let urls = (0..<count).map { "nats://127.0.0.1:\(ports[(first + $0) % count])" }
            let deadline = Date(timeIntervalSinceNow: 30)
            while links.count == first {
                if let link = try? ClusterLink(servers: urls, configuration: RelayConfiguration(keyFile: ""), inbox: ClusterInbox(wake: {}), tallyNamingKey: naming) {
                    links.append(link)
                } else {
                    guard Date() < deadline else {
                        Self.stop(processes)
                        throw XCTSkip("nats-server did not answer")
                    }
                    usleep(50_000)
                }
            }
        }
        self.links = links
    }

    func stop() {
        for link in links { link.close() }
        Self.stop(processes)
    }

    private static func stop(_ processes: [Process]) {
        for server in processes where server.isRunning {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
    }
}

/// A tally counting `bytes`.
private func tally(_ bytes: Int) -> HeldTally {
    var t = HeldTally()
    t.count(bytes, heldAt: 1_800_000_000)
    return t
}

/// Servers for one test case, in a folder of their own.
class NatsServersTestCase: XCTestCase {
    fileprivate var servers: NatsServers?
    private var directory: URL?
    var serverCount: Int { 1 }
    var nodeCount: Int { 1 }

    override func setUpWithError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-tally-bucket-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        directory = dir
        servers = try NatsServers(count: serverCount, links: nodeCount, in: dir)
    }

    override func tearDown() {
        servers?.stop()
        servers = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    func bucket(_ node: Int) throws -> TallyBucket { try XCTUnwrap(servers?.links[node].tallyBucket) }
}

/// The held bucket's reads and writes against a real JetStream server (`TallyBucket`): a
/// write whose answer was lost and is sent again is stored once and answered with its
/// revision (a server alone recognises the copy before it checks the revision), a write on
/// an old revision is a conflict, and a read gives the leader's entry.
final class TallyBucketTests: NatsServersTestCase {
    func testAWriteSentAgainIsStoredOnceAndAStaleOneConflicts() throws {
        let bucket = try bucket(0)
        let never = { false }
        XCTAssertEqual(bucket.read("k")?.revision, 0, "a missing key reads as a fresh tally at revision 0")
        XCTAssertEqual(bucket.read("k")?.tally, HeldTally())

        guard case .revision(let r1) = bucket.write("k", tally(100), after: 0, id: "a.1", stop: never) else { return XCTFail("first write") }
        XCTAssertEqual(bucket.write("k", tally(100), after: 0, id: "a.1", sentBefore: true, stop: never), .revision(r1),
                       "the same publish again (its answer lost): a duplicate, answered with the revision it was stored at")
        XCTAssertEqual(bucket.write("k", tally(300), after: 0, id: "b.1", stop: never), .conflict, "another write on the old revision")
        XCTAssertEqual(bucket.read("k")?.revision, r1)
        XCTAssertEqual(bucket.read("k")?.tally, tally(100), "stored once")

        guard case .revision(let r2) = bucket.write("k", tally(200), after: r1, id: "a.2", stop: never) else { return XCTFail("second write") }
        guard case .revision(let r3) = bucket.write("k", tally(50), after: r2, id: "b.2", stop: never) else { return XCTFail("other node's write") }
        XCTAssertEqual(bucket.write("k", tally(200), after: r1, id: "a.2", sentBefore: true, stop: never), .revision(r2),
                       "sent again after another node wrote on top of it: still recognised as stored, not applied again")
        XCTAssertEqual(bucket.read("k")?.revision, r3)
        XCTAssertEqual(bucket.read("k")?.tally, tally(50))
        XCTAssertEqual(bucket.write("k", tally(999), after: r2, stop: never), .conflict)
        XCTAssertEqual(bucket.read("k")?.tally, tally(50), "a conflicting write stores nothing")
    }

    func testTheDuplicatesWindowCoversEveryResend() throws {
        let window = try XCTUnwrap(bucket(0).duplicatesWindow())
        XCTAssertGreaterThan(window, TallyBucket.resendFor, "an unanswered write is sent again only while JetStream still recognises it")
    }
}

/// The bucket as a cluster keeps it (three routed servers, three replicas), written by two
/// nodes on different servers: of two writes on one revision at once only one is stored
/// (nats-server up to 2.9.20 stored both without the tally's lock, the later wiping what
/// the first counted), and a write sent again on a revision is still stored once.
final class ClusteredTallyBucketTests: NatsServersTestCase {
    override var serverCount: Int { 3 }
    override var nodeCount: Int { 2 }

    func testTwoNodesWritingOnOneRevisionAtOnceStoreOne() throws {
        let buckets = [try bucket(0), try bucket(1)]
        var both = 0, neither = 0, won = [0, 0]
        for trial in 0..<100 {
            let key = "k\(trial % 4)"
            let base = try XCTUnwrap(buckets[0].read(key))
            let answers = Mutex<[TallyBucket.Written?]>([nil, nil])
            let done = DispatchGroup(), start = DispatchSemaphore(value: 0)
            for (i, bucket) in buckets.enumerated() {
                let value = tally(trial * 10 + i + 1), revision = base.revision
                done.enter()
                Thread.detachNewThread {
                    start.wait()
                    let written = bucket.write(key, value, after: revision, stop: { false })
                    answers.withLock { $0[i] = written }
                    done.leave()
                }
            }
            start.signal()
            start.signal()
            done.wait()
            let stored = answers.withLock { $0 }.enumerated().compactMap { i, written -> (Int, UInt64)? in
                if case .revision(let r)? = written { return (i, r) } else { return nil }
            }
            if stored.count == 2 { both += 1 }
            if stored.isEmpty { neither += 1 }
            if stored.count == 1 {
                won[stored[0].0] += 1
                XCTAssertEqual(buckets[1].read(key)?.revision, stored[0].1, "the one stored is the entry")
            }
        }
        XCTAssertEqual(both, 0, "two writes on one revision at once: one stored, the other a conflict")
        XCTAssertLessThan(neither, 50, "mostly one of them is stored")
        XCTAssertGreaterThan(won[0], 0, "each node's lock is given back: either may win the next (\(won))")
        XCTAssertGreaterThan(won[1], 0, "each node's lock is given back: either may win the next (\(won))")
    }

    func testAWriteSentAgainOnARevisionIsStoredOnce() throws {
        let bucket = try bucket(0)
        let never = { false }
        guard case .revision(let r1) = bucket.write("k", tally(100), after: 0, id: "a.1", stop: never) else { return XCTFail("first write") }
        guard case .revision(let r2) = bucket.write("k", tally(200), after: r1, id: "a.2", stop: never) else { return XCTFail("second write") }
        XCTAssertEqual(bucket.write("k", tally(200), after: r1, id: "a.2", sentBefore: true, stop: never), .revision(r2),
                       "the copy is refused on its revision, and found stored")
        XCTAssertEqual(bucket.read("k")?.tally, tally(200), "stored once")
        XCTAssertEqual(try self.bucket(1).write("k", tally(300), after: r1, stop: never), .conflict, "another node's write on the old revision")
        guard case .revision = try self.bucket(1).write("k", tally(300), after: r2, stop: never) else { return XCTFail("the lock was given back") }
    }
}

/// The pairing bucket on three routed servers, two nodes (`PairingBucket`): two nodes
/// presenting one code at once — fresh, or again after its last match was forgotten —
/// never both write its entry: one waits with it, the other is told who.
final class PairingBucketTests: NatsServersTestCase {
    override var serverCount: Int { 3 }
    override var nodeCount: Int { 2 }

    private func pairing(_ node: Int) throws -> (PairingBucket, ClusterNodeID) {
        let link = try XCTUnwrap(servers?.links[node])
        return (link.pairingEntries, link.node)
    }

    /// Both nodes claim `code` at the same moment: their answers.
    private func claimAtOnce(_ code: [UInt8], _ nodes: [(PairingBucket, ClusterNodeID)]) -> [PairingLookup.Entry?] {
        let answers = Mutex<[PairingLookup.Entry?]>([nil, nil])
        let done = DispatchGroup(), start = DispatchSemaphore(value: 0)
        for (i, (bucket, node)) in nodes.enumerated() {
            done.enter()
            Thread.detachNewThread {
                start.wait()
                let entry = bucket.claim(code, node: node, session: 100 + i)
                answers.withLock { $0[i] = entry }
                done.leave()
            }
        }
        start.signal()
        start.signal()
        done.wait()
        return answers.withLock { $0 }
    }

    func testTwoNodesPresentingOneCodeAtOnceWriteOneEntry() throws {
        let nodes = [try pairing(0), try pairing(1)]
        var won = [0, 0]
        for trial in 0..<60 {
            let code = Random.bytes(32)
            // Half the codes were matched once already (their entry forgotten), as a
            // contact's code is at every reconnect.
            if trial % 2 == 1 {
                XCTAssertEqual(nodes[0].0.claim(code, node: nodes[0].1, session: 1), .created)
                nodes[0].0.forget(code)
            }
            let answers = claimAtOnce(code, nodes)
            let created = answers.indices.filter { answers[$0] == .created }
            XCTAssertEqual(created.count, 1, "trial \(trial): \(answers)")
            guard created.count == 1 else { continue }
            let winner = created[0], loser = 1 - winner
            won[winner] += 1
            guard case .waiting(let node, let session, _)? = answers[loser] else { XCTFail("trial \(trial): \(answers)"); continue }
            XCTAssertEqual(node, nodes[winner].1, "the other is told who waits")
            XCTAssertEqual(session, 100 + winner)
        }
        XCTAssertGreaterThan(won[0] + won[1], 0)
    }

    func testANodeTakesItsOwnEntryOverOnlyAtTheRevisionItSaw() throws {
        let (bucket, node) = try pairing(0)
        let (other, otherNode) = try pairing(1)
        let code = Random.bytes(32)
        XCTAssertEqual(bucket.claim(code, node: node, session: 1), .created)
        guard case .waiting(_, 1, let revision) = other.claim(code, node: otherNode, session: 9) else { return XCTFail("the entry is node 0's") }
        // Session 1 went; session 2 of the same node takes the code over.
        XCTAssertEqual(bucket.claim(code, node: node, session: 2, takingOver: revision), .created)
        guard case .waiting(_, 2, let newer) = other.claim(code, node: otherNode, session: 9) else { return XCTFail("now session 2's") }
        XCTAssertGreaterThan(newer, revision)
        // A takeover on the revision before: the newer entry stays.
        guard case .waiting(_, 2, _) = bucket.claim(code, node: node, session: 3, takingOver: revision) else { return XCTFail("kept") }
    }
}
