import Foundation
import Synchronization
import XCTest
@testable import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// The local wake-up as another local user or a stray program could meet it: a socket file
/// in the private home, whose datagrams only ever mean "look at the store".
final class WakeSignalTests: XCTestCase {
    var directory: URL!
    var listeners: [WakeListener] = []
    var children: [Process] = []

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-wake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for listener in listeners { listener.stop() }
        for child in children where child.isRunning {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        func bump() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }

    /// A home made as accounts make theirs (0700).
    func home(_ name: String = "home") throws -> String {
        let path = directory.appendingPathComponent(name).path
        try PrivateFiles.makeDirectory(path)
        return path
    }

    func listen(_ home: String, _ counter: Counter) throws -> WakeListener {
        let listener = try WakeListener(home: home) { counter.bump() }
        listeners.append(listener)
        return listener
    }

    func until(_ what: String, seconds: Double = 5, _ condition: () -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !condition() {
            guard Date() < deadline else { throw NSError(domain: "timed out waiting for: \(what)", code: 1) }
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 0.01)
        }
    }

    /// Sends one datagram of exactly these bytes to the home's wake-up; errno on failure.
    @discardableResult
    func sendDatagram(_ bytes: [UInt8], to home: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var size = Int32(1 << 20)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let sent = WakeSignal.withAddress(home: home) { address, length in
            bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, address, length) }
        }
        return sent == bytes.count ? 0 : errno
    }

    func testTheSocketIsAFileInThePrivateHomeOnlyItsOwnerMayUse() throws {
        let home = try home()
        let listener = try listen(home, Counter())
        var st = stat()
        XCTAssertEqual(lstat(WakeSignal.path(home: home), &st), 0, "the socket is a file in the home")
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertEqual(st.st_uid, geteuid())
        XCTAssertEqual(PrivateFiles.mode(home), 0o700)
        listener.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: WakeSignal.path(home: home)), "a clean stop removes it")
    }

    func testAHomeOthersCanEnterGetsNoListener() throws {
        let home = try home()
        chmod(home, 0o755)
        XCTAssertThrowsError(try listen(home, Counter()))
        XCTAssertFalse(FileManager.default.fileExists(atPath: WakeSignal.path(home: home)))
    }

    /// The old listener stopped for good on an empty datagram or one starting with a zero
    /// byte: anyone could switch the wake-up off. Now every datagram is a poke, and a flood
    /// makes one call until the engine has looked.
    func testGarbageDatagramsOnlyAskForALookAndTheNextPokeStillWorks() throws {
        let home = try home()
        let counter = Counter()
        let listener = try listen(home, counter)
        var random = [UInt8](repeating: 0, count: 200)
        for i in random.indices { random[i] = UInt8.random(in: 0...255) }
        let garbage: [[UInt8]] = [[], [0], [0, 0, 0, 0], random, [UInt8](repeating: 0, count: 100_000), [UInt8](repeating: 0xFF, count: 60_000)]
        for datagram in garbage { XCTAssertEqual(sendDatagram(datagram, to: home), 0, "a datagram of \(datagram.count) bytes") }
        try until("the first datagram asks for a look") { counter.count >= 1 }
        for _ in 0..<1000 { sendDatagram([0], to: home) }
        // Taken after the flood was queued: still one call, the engine has not looked yet.
        sendDatagram([], to: home)
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 0.05)
        XCTAssertEqual(counter.count, 1, "pokes while a look is pending make one look")
        listener.looked()
        WakeSignal.poke(home: home)
        try until("the next real poke after the garbage is heard") { counter.count == 2 }
    }

    /// `sun_path` holds 108 bytes; a home deeper than that still gets its socket file, and
    /// pokes reach it.
    func testALongHomePathStillGetsItsSocketInTheHome() throws {
        let deep = String(repeating: "d", count: 60)
        let home = try home("\(deep)/\(deep)/home")
        XCTAssertGreaterThan(WakeSignal.path(home: home).utf8.count, WakeSignal.pathCapacity)
        let counter = Counter()
        _ = try listen(home, counter)
        var st = stat()
        XCTAssertEqual(lstat(WakeSignal.path(home: home), &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        WakeSignal.poke(home: home)
        try until("a poke reaches the long path") { counter.count == 1 }
    }

    /// A socket file left by a dead engine is replaced; a live listener's is not taken over
    /// (and still hears pokes); nor is a stale one while another process holds the lock.
    func testOnlyAStaleSocketFileIsReplaced() throws {
        let home = try home()
        // Stale: bound, then its process "died" without removing it.
        let dead = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertEqual(WakeSignal.withAddress(home: home) { bind(dead, $0, $1) }, 0)
        close(dead)
        let first = Counter()
        let live = try listen(home, first)
        WakeSignal.poke(home: home)
        try until("the listener that replaced the stale file hears pokes") { first.count == 1 }

        XCTAssertThrowsError(try listen(home, Counter()), "a live listener's socket is not taken over")
        live.looked()
        WakeSignal.poke(home: home)
        try until("the live listener still hears pokes") { first.count == 2 }
        live.stop()

        // Stale again, but another process holds the engine lock: left alone.
        let again = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertEqual(WakeSignal.withAddress(home: home) { bind(again, $0, $1) }, 0)
        close(again)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/perl") else { return }
        // One process that holds the lock (flock(1) would hand it to a child it starts).
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/perl")
        let marker = directory.appendingPathComponent("locked").path
        holder.arguments = ["-e", """
            use Fcntl ":flock"; open(my $f, ">>", $ARGV[0]) or die; flock($f, LOCK_EX | LOCK_NB) or die;
            open(my $m, ">", $ARGV[1]) or die; close($m); sleep 30;
            """, "\(home)/engine.lock", marker]
        try holder.run()
        children.append(holder)
        try until("another process holds the engine lock") { FileManager.default.fileExists(atPath: marker) }
        XCTAssertFalse(EngineLock.noOtherEngine(home: home))
        XCTAssertThrowsError(try listen(home, Counter()), "not replaced while another engine may run")
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        try until("the lock is free") { EngineLock.noOtherEngine(home: home) }
        _ = try listen(home, Counter())
    }

    /// Run as another user (`nobody`, through setpriv): it can neither send to the socket
    /// nor bind a socket of its own in the home.
    func testAnotherUserCanNeitherSendToNorClaimTheSocket() throws {
        let setpriv = "/usr/bin/setpriv", perl = "/usr/bin/perl"
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: setpriv),
              FileManager.default.isExecutableFile(atPath: perl) else {
            throw XCTSkip("needs root, setpriv and perl to act as another user")
        }
        // The temporary directory above the home must let `nobody` through, as /tmp does.
        chmod(directory.path, 0o755)
        let home = try home()
        let counter = Counter()
        _ = try listen(home, counter)
        let script = """
            use Socket;
            socket(my $s, AF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
            my $a = pack_sockaddr_un($ARGV[1]);
            if ($ARGV[0] eq "send") { print defined(send($s, "x", 0, $a)) ? "ok" : "refused: $!" }
            else { print bind($s, $a) ? "ok" : "refused: $!" }
            """
        func run(_ asNobody: Bool, _ action: String, _ path: String) throws -> String {
            let p = Process()
            let pipe = Pipe()
            if asNobody {
                p.executableURL = URL(fileURLWithPath: setpriv)
                p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", perl, "-e", script, action, path]
            } else {
                p.executableURL = URL(fileURLWithPath: perl)
                p.arguments = ["-e", script, action, path]
            }
            p.standardOutput = pipe
            p.standardError = FileHandle.nullDevice
            try p.run()
            children.append(p)
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            return out
        }
        let socketPath = WakeSignal.path(home: home)
        XCTAssertTrue(try run(true, "send", socketPath).hasPrefix("refused"), "nobody cannot send to the wake-up")
        XCTAssertTrue(try run(true, "bind", "\(home)/claimed.sock").hasPrefix("refused"), "nobody cannot bind in the home")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(home)/claimed.sock"))
        XCTAssertEqual(counter.count, 0)
        // The same script as the owner does reach it: the refusals above are the user's.
        XCTAssertEqual(try run(false, "send", socketPath), "ok")
        try until("the owner's datagram is heard") { counter.count == 1 }
    }
}
