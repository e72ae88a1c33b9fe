import Foundation
import RChatCore
import RChatRelay
import RChatRelayClient
import RChatSQL
import Synchronization
import XCTest

/// A commit of --persist that fails: the relay stops before anything of that iteration is
/// acknowledged, the library reports it as an error (it never ends the process itself), and
/// the executable turns it into one line and exit status 1.
final class RelayPersistenceFailureTests: XCTestCase {
    /// Makes every later insert into the held table fail, from another connection (the
    /// relay's connection sees the schema change at its next statement).
    private func refuseInserts(_ path: String) throws {
        let database = try Database(path: path)
        try database.execute("CREATE TRIGGER refuse_held BEFORE INSERT ON held BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
    }

    /// A frame for the offline peer that the relay cannot store: the sender never hears
    /// "sent"; its connection closes instead.
    private func sendUnstorable(_ address: RelayAddress, persistPath: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let pair = try link(address)
        pair.b.close()
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .peerGone(link: pair.link), file: file, line: line)
        try refuseInserts(persistPath)
        let seq = try pair.a.send(on: pair.link, [1, 2, 3])
        var events: [RelayEvent] = []
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline, let event = pair.a.nextEvent(timeout: deadline.timeIntervalSinceNow) {
            events.append(event)
            if case .closed = event { break }
        }
        XCTAssertFalse(events.contains(.sent(seq: seq, forwarded: false)), "acknowledged what was not stored: \(events)", file: file, line: line)
        XCTAssertTrue(events.contains { if case .closed = $0 { return true } else { return false } }, "\(events)", file: file, line: line)
    }

    func testTheLibraryThrowsInsteadOfEndingTheProcess() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-relay-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = RelayConfiguration(keyFile: directory.appendingPathComponent("relay.key").path)
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.persistPath = directory.appendingPathComponent("held.sqlite").path
        let relay = try Relay(configuration: configuration, log: Logger(sink: { _ in }))
        let outcome = Mutex<String?>(nil)
        let thread = Thread {
            do {
                try relay.run()
                outcome.withLock { $0 = "returned" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        thread.start()
        try sendUnstorable(relay.address, persistPath: try XCTUnwrap(configuration.persistPath))
        let reported = waitFor(timeout: 10) { outcome.withLock { $0 } }
        if reported == nil { relay.stop() }
        XCTAssertEqual(reported.map { $0.hasPrefix("persistence failed: ") && $0.contains("refused by the test") }, true, "\(reported ?? "still running")")
        XCTAssertTrue(reported?.hasSuffix("stopped without acknowledging") ?? false)
    }

    func testTheRelayProcessExitsWithOneLineAndStatus1() throws {
        let relay = RelayProcess()
        defer { relay.stop(signal: SIGKILL) }
        let address = try relay.start(["--persist", relay.persistPath])
        try sendUnstorable(address, persistPath: relay.persistPath)
        let process = try XCTUnwrap(relay.process)
        XCTAssertNotNil(waitFor(timeout: 10) { process.isRunning ? nil : true }, "the relay did not stop")
        process.waitUntilExit()  // it has stopped: this only collects its status
        XCTAssertEqual(process.terminationReason, .exit, relay.stderr)
        XCTAssertEqual(process.terminationStatus, 1, relay.stderr)
        let lines = relay.stderr.split(separator: "\n").filter { $0.contains("persistence failed") }
        XCTAssertEqual(lines.count, 1, relay.stderr)
        XCTAssertTrue(lines.first?.hasPrefix("rchat-relay: persistence failed: ") ?? false, relay.stderr)
    }
}
