import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A running `rchat sync` and its local wake-up, `engine.wake` in the home: garbage sent to
/// it does no harm, and a message stored while it is gone still goes.
final class EngineWakeTests: EngineTestCase {
    func wakePath(_ person: String) -> String { world.box.path("\(person)-home/engine.wake") }

    /// One datagram to a socket file; true when it was taken.
    @discardableResult
    func sendDatagram(_ bytes: [UInt8], to path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var size = Int32(1 << 20)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in for (i, b) in path.utf8.enumerated() { sunPath[i] = b } }
        let sent = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, a, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        return sent == bytes.count
    }

    func testGarbageAtTheWakeUpDoesNoHarmAndTheNextSendStillGoesAtOnce() throws {
        try world.pairWithSession()
        let path = wakePath("alice")
        XCTAssertEqual(world.box.mode(path), 0o600, "the wake-up is a 0600 socket file in Alice's home")
        XCTAssertEqual(world.box.mode(world.box.path("alice-home")), 0o700)
        let before = try world.list("alice", "Sam")
        var random = [UInt8](repeating: 0, count: 4096)
        for i in random.indices { random[i] = UInt8.random(in: 0...255) }
        for datagram in [[], [0], random, [UInt8](repeating: 0, count: 100_000)] + Array(repeating: [UInt8(0)], count: 500) {
            XCTAssertTrue(sendDatagram(datagram, to: path), "a datagram of \(datagram.count) bytes")
        }
        XCTAssertTrue(world.isSyncRunning("alice"))
        XCTAssertEqual(try world.list("alice", "Sam"), before, "garbage stores nothing")
        let id = try world.send("alice", to: "Sam", "after the garbage")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 10)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.text), ["warm-up", "after the garbage"])
        world.stopSync("alice")
        world.stopSync("sam")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "a clean stop removes the socket file")
    }

    /// The socket file is gone (so `rchat send`'s poke goes nowhere): the engine's periodic
    /// look at the store still finds the message and sends it.
    func testAMessageStoredWhileTheWakeUpIsGoneIsSentByThePeriodicLook() throws {
        try world.pairWithSession()
        let path = wakePath("alice")
        XCTAssertEqual(unlink(path), 0, "the wake-up socket file exists while the engine runs")
        let stored = Date()
        let id = try world.send("alice", to: "Sam", "nobody poked")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 15)
        let waited = Date().timeIntervalSince(stored)
        // The look comes every 3 s; the rest is the round trip on a busy machine.
        XCTAssertLessThan(waited, 12, "sent by the periodic look, not by a later session")
        world.stopSync("alice")
        world.stopSync("sam")
    }
}
