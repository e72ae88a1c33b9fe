import Foundation
import RChatCrypto
import RChatNet
import RChatRelayClient
import XCTest
@testable import RChatRelay

/// `rchat-relay`'s command line, as a process started with it: every refusal is one line
/// and exit 2, and the help lists every declared option.
final class RelayCommandLineTests: XCTestCase {
    private func start(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: RelayProcess.binary)
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    func testBadOptionsAreOneLineAndExit2() throws {
        let listen = ["--listen", "127.0.0.1:0", "--key-file", NSTemporaryDirectory() + "rchat-relay-cli-\(UUID().uuidString).key"]
        let cases: [([String], String)] = [
            (["--quota", "many"], #"rchat-relay: --quota must be a whole number from 1 to 10000000, not "many""#),
            (["--quota-bytes", "1000"], #"rchat-relay: --quota-bytes must be a whole number from 1048576 to 1099511627776, not "1000""#),
            (["--quota-bytes", "256MiB"], #"rchat-relay: --quota-bytes must be a whole number from 1048576 to 1099511627776, not "256MiB""#),
            (["--quota-bytes", "1099511627777"], #"rchat-relay: --quota-bytes must be a whole number from 1048576 to 1099511627776, not "1099511627777""#),
            (["--idle-timeout", "0"], #"rchat-relay: --idle-timeout must be a number of seconds above 0, not "0""#),
            (["--max-invites", "0"], #"rchat-relay: --max-invites must be a whole number from 1 to 100000000, not "0""#),
            (["--invite-expiry", "1d"], #"rchat-relay: --invite-expiry must be a whole number from 1 to 31622400, not "1d""#),
            (["--bogus"], #"rchat-relay: unknown option "--bogus" (see rchat-relay --help)"#),
            (["--max-connections"], "rchat-relay: --max-connections needs a value"),
            (["stray"], #"rchat-relay: unexpected argument "stray""#),
        ]
        for (bad, line) in cases {
            let run = try start(listen + bad)
            XCTAssertEqual(run.status, 2, "\(bad): \(run.stderr)")
            XCTAssertEqual(run.stderr, line + "\n", "\(bad)")
            XCTAssertEqual(run.stdout, "", "\(bad): no relay address printed")
        }
    }

    func testHelpListsEveryDeclaredOptionWithItsDefault() throws {
        let run = try start(["--help"])
        XCTAssertEqual(run.status, 0)
        XCTAssertTrue(run.stdout.hasPrefix("usage: rchat-relay --listen HOST:PORT [--key-file FILE]"), run.stdout)
        for option in RelayConfiguration.Options.parser.options {
            XCTAssertTrue(run.stdout.contains("\n  \(option.synopsis)"), "\(option.name) missing from:\n\(run.stdout)")
        }
        let defaults = RelayConfiguration(keyFile: "")
        XCTAssertTrue(run.stdout.contains("held items per mailbox (default \(defaults.quota))"), run.stdout)
        XCTAssertTrue(run.stdout.contains("held payload bytes per mailbox (message requests count apart) (default 268435456)"), run.stdout)
        // The parsed defaults are the configuration's own.
        let parsed = try RelayConfiguration.parse(["--listen", "127.0.0.1:0"], environment: [:])
        XCTAssertEqual(parsed.quota, defaults.quota)
        XCTAssertEqual(parsed.quotaBytes, 256 << 20)
        XCTAssertEqual(try RelayConfiguration.parse(["--listen", "127.0.0.1:0", "--quota-bytes", "1048576"], environment: [:]).quotaBytes, 1 << 20)
        XCTAssertEqual(parsed.idleTimeout, defaults.idleTimeout)
        XCTAssertEqual(parsed.maxOutputBytes, defaults.maxOutputBytes)
        XCTAssertEqual(parsed.holdHours, defaults.holdHours)
    }

    /// `--log-level warning` keeps refusals and drops the notes: a client that says a bad
    /// hello is logged; the start, clients that link and leave, and the stop are not.
    func testLogLevelDropsLinesBelowIt() throws {
        for level in ["warning", "note"] {
            let relay = RelayProcess()
            defer { relay.stop(signal: SIGKILL) }
            let address = try relay.start(["--log-level", level])
            let raw = try RawClient(address)
            try raw.write(FrameCodec.encode(Random.bytes(36)))
            XCTAssertEqual(raw.expectClosed(), .malformed)
            try assertRelayServes(address)
            XCTAssertNotNil(waitFor(timeout: 5) { relay.stderr.contains("bad hello") ? true : nil }, relay.stderr)
            if level == "note" {
                XCTAssertNotNil(waitFor(timeout: 5) { relay.stderr.contains(") closed; ") ? true : nil }, relay.stderr)
            }
            relay.stop(signal: SIGTERM)   // waits for the exit: everything it logged is in
            let notes = ["listening on", ") closed; ", "stopped; holding"].filter { relay.stderr.contains($0) }
            XCTAssertEqual(notes.count, level == "note" ? 3 : 0, "\(level): \(relay.stderr)")
            XCTAssertEqual(relay.stderr.components(separatedBy: "bad hello").count - 1, 1, "\(level): \(relay.stderr)")
        }
    }
}
