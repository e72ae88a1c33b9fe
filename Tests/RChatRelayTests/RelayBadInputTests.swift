import Foundation
import RChatCore
import RChatCrypto
import RChatNet
import RChatRelayClient
import RChatWire
import XCTest

/// Every bad input gets an error frame or a close, is logged, and the relay keeps serving.
final class RelayBadInputTests: XCTestCase {
    var relay: RelayProcess!
    var address: RelayAddress!

    override func setUpWithError() throws {
        relay = RelayProcess()
        address = try relay.start(["--frame-timeout", "0.5", "--handshake-timeout", "1", "--max-connections", "40",
                                   "--max-connections-per-address", "1000"])
    }
    override func tearDown() { relay.stop(signal: SIGKILL); relay = nil }

    private func logCount(_ fragment: String) -> Int { relay.stderr.components(separatedBy: fragment).count - 1 }

    func testGarbageBytes() throws {
        let raw = try RawClient(address)
        try raw.write(FrameCodec.encode(Random.bytes(36)))
        XCTAssertEqual(raw.expectClosed(), .malformed)
        let text = try RawClient(address)
        try text.write(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        XCTAssertEqual(text.expectClosed(), .oversized)
        try assertRelayServes(address)
        XCTAssertEqual(logCount("bad hello"), 1, relay.stderr)
    }

    func testOversizedLengthPrefix() throws {
        let raw = try RawClient(address)
        try raw.handshake(relayKey: address.publicKey)
        try raw.write([0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3])
        XCTAssertEqual(raw.expectClosed(), .oversized)
        try assertRelayServes(address)
        XCTAssertEqual(logCount("exceeds the maximum"), 1, relay.stderr)
    }

    func testFrameBeforeAuthentication() throws {
        let raw = try RawClient(address)
        try raw.handshake(relayKey: address.publicKey)
        _ = try raw.writeSealed(.present([Random.bytes(32)]))
        XCTAssertEqual(raw.expectClosed(), .notAuthenticated)
        try assertRelayServes(address)
        XCTAssertEqual(logCount("before authentication"), 1, relay.stderr)
    }

    func testBadSignature() throws {
        let raw = try RawClient(address)
        try raw.handshake(relayKey: address.publicKey)
        try raw.authenticate(.generate(), tamper: true)
        XCTAssertEqual(raw.expectClosed(), .badSignature)
        // A signature from another connection's transcript does not carry over either.
        let key = SigningKey.generate()
        let one = try RawClient(address), two = try RawClient(address)
        try one.handshake(relayKey: address.publicKey)
        try two.handshake(relayKey: address.publicKey)
        let stolen = key.sign(RelayHandshake.authMessage(transcript: one.transcript, challenge: one.challenge))
        _ = try two.writeSealed(.auth(mailboxKey: key.publicKey, signature: stolen))
        XCTAssertEqual(two.expectClosed(), .badSignature)
        try assertRelayServes(address)
        XCTAssertEqual(logCount("signature does not verify"), 2, relay.stderr)
    }

    func testReplayedAndAlteredFrames() throws {
        let raw = try RawClient(address)
        try raw.handshake(relayKey: address.publicKey)
        try raw.authenticate(.generate())
        guard case .welcome? = try raw.readMessage() else { return XCTFail("no welcome") }
        let ping = try raw.writeSealed(.ping(5))
        XCTAssertEqual(try raw.readMessage(), .drained)
        XCTAssertEqual(try raw.readMessage(), .pong(5))
        try raw.write(ping) // the same sealed frame again
        XCTAssertEqual(raw.expectClosed(), .decryptionFailed)

        let altered = try RawClient(address)
        try altered.handshake(relayKey: address.publicKey)
        var frame = FrameCodec.encode(altered.cipher!.seal(ClientMessage.ping(1).encoded()))
        frame[frame.count - 1] ^= 0x80
        try altered.write(frame)
        XCTAssertEqual(altered.expectClosed(), .decryptionFailed)
        try assertRelayServes(address)
        XCTAssertEqual(logCount("failed to decrypt"), 2, relay.stderr)
    }

    func testSlowClientsAreDropped() throws {
        // Never finishes a frame.
        let slow = try RawClient(address)
        try slow.write([0, 0, 0, 36, 0x52, 0x43])
        XCTAssertEqual(slow.expectClosed(timeout: 5), .timeout)
        // Never says anything.
        let silent = try RawClient(address)
        XCTAssertEqual(silent.expectClosed(timeout: 5), .timeout)
        try assertRelayServes(address)
        XCTAssertEqual(logCount("unfinished"), 1, relay.stderr)
        XCTAssertEqual(logCount("no authentication within"), 1, relay.stderr)
    }

    func testConnectionsBeyondTheLimitAreRefusedAndLoggedOnce() throws {
        var held: [BlockingSocket] = []
        for _ in 0..<40 { held.append(try BlockingSocket(host: "127.0.0.1", port: address.port)) }
        // Wait until the relay has accepted all 40: the next one is refused with "busy".
        XCTAssertNotNil(waitFor(timeout: 5) { () -> Bool? in
            guard let probe = try? RawClient(self.address) else { return nil }
            return probe.expectClosedQuietly() == .busy ? true : nil
        })
        var refused: [RawClient] = []
        for _ in 0..<200 { refused.append(try RawClient(address)) }
        for r in refused { XCTAssertEqual(r.expectClosed(), .busy) }
        held.removeAll() // close them
        XCTAssertNotNil(waitFor(timeout: 5) { () -> Bool? in
            (try? assertRelayServesQuietly(self.address)) == true ? true : nil
        })
        try assertRelayServes(address)
        XCTAssertEqual(logCount("connection limit 40 reached"), 1, relay.stderr)
        XCTAssertNotNil(waitFor(timeout: 5) { self.logCount("burst over") == 1 ? true : nil }, relay.stderr)
    }
}

extension RawClient {
    /// Like expectClosed, without failing the test when the connection stays open.
    func expectClosedQuietly() -> RelayErrorCode? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
        defer { buffer.deallocate() }
        var last: RelayErrorCode?
        for _ in 0..<5 {
            if let f = try? decoder.next(), f.count == 2, f[0] == 0xEE { last = RelayErrorCode(rawValue: f[1]) }
            guard let n = try? socket.read(into: buffer) else { continue }
            if n == 0 { return last }
            decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        return nil
    }
}

/// True when a fresh pair links and exchanges a frame; false (no test failure) otherwise.
func assertRelayServesQuietly(_ address: RelayAddress) throws -> Bool {
    let a = try RelayClient.connect(to: address, mailboxKey: .generate(), timeout: 2)
    defer { a.close() }
    return a.nextEvent(timeout: 2) == .drained
}
