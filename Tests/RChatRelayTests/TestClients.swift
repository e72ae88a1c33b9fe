import Foundation
import RChatCore
import RChatCrypto
import RChatNet
import RChatRelayClient
import RChatWire
import XCTest

extension RelayClient {
    /// The next event that is not a `pong`, or fails the test.
    func expectEvent(timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line) -> RelayEvent? {
        let e = nextEvent(timeout: timeout)
        if e == nil { XCTFail("no event within \(timeout) s", file: file, line: line) }
        return e
    }

    /// Collects `count` deliveries (skipping nothing else silently: other events fail).
    func expectDeliveries(_ count: Int, timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line) -> [Delivery] {
        var out: [Delivery] = []
        let deadline = Date(timeIntervalSinceNow: timeout)
        while out.count < count, Date() < deadline {
            guard let e = nextEvent(timeout: deadline.timeIntervalSinceNow) else { break }
            if case .delivery(let d) = e { out.append(d) } else if case .drained = e { continue } else {
                XCTFail("unexpected \(e) while waiting for deliveries", file: file, line: line)
            }
        }
        XCTAssertEqual(out.count, count, "deliveries", file: file, line: line)
        return out
    }

    /// No event arrives for `seconds` (used sparingly: only to show something did NOT happen).
    func expectQuiet(_ seconds: Double = 0.3, file: StaticString = #filePath, line: UInt = #line) {
        if let e = nextEvent(timeout: seconds) { XCTFail("unexpected event \(e)", file: file, line: line) }
    }
}

/// Two clients linked through a relay, the usual fixture.
struct LinkedPair {
    let a: RelayClient, b: RelayClient
    let keyA: SigningKey, keyB: SigningKey
    let link: LinkID
    let code: [UInt8]
}

func link(_ address: RelayAddress, keyA: SigningKey = .generate(), keyB: SigningKey = .generate(), from host: String? = nil,
          file: StaticString = #filePath, line: UInt = #line) throws -> LinkedPair {
    let a = try RelayClient.connect(to: address, mailboxKey: keyA, from: host)
    let b = try RelayClient.connect(to: address, mailboxKey: keyB, from: host)
    XCTAssertEqual(a.nextEvent(timeout: 5), .drained, file: file, line: line)
    XCTAssertEqual(b.nextEvent(timeout: 5), .drained, file: file, line: line)
    let code = Random.bytes(32)
    try a.present([code])
    try b.present([Random.bytes(32), code])
    guard case .linked(let la, let ca)? = a.nextEvent(timeout: 5),
          case .linked(let lb, let cb)? = b.nextEvent(timeout: 5) else {
        XCTFail("not linked", file: file, line: line)
        throw RelayClientError.closed
    }
    XCTAssertEqual(la, lb, file: file, line: line)
    XCTAssertEqual(ca, code, file: file, line: line)
    XCTAssertEqual(cb, code, file: file, line: line)
    return LinkedPair(a: a, b: b, keyA: keyA, keyB: keyB, link: la, code: code)
}

/// The check after every bad input: a fresh pair can still link and exchange a frame.
func assertRelayServes(_ address: RelayAddress, file: StaticString = #filePath, line: UInt = #line) throws {
    let pair = try link(address, file: file, line: line)
    defer { pair.a.close(); pair.b.close() }
    let seq = try pair.a.send(on: pair.link, Array("still here".utf8))
    XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: seq, forwarded: true), file: file, line: line)
    guard case .delivery(let d)? = pair.b.nextEvent(timeout: 5) else { return XCTFail("no delivery", file: file, line: line) }
    XCTAssertEqual(d.payload, Array("still here".utf8), file: file, line: line)
    XCTAssertEqual(d.link, pair.link, file: file, line: line)
}

/// A client that speaks the protocol by hand, to misbehave on purpose.
final class RawClient {
    let socket: BlockingSocket
    var decoder = FrameDecoder(maximumBodyBytes: RelayProtocol.maximumFrameBytes)
    var cipher: TransportCipher?
    var transcript: [UInt8] = []
    var challenge: [UInt8] = []

    init(_ address: RelayAddress) throws {
        socket = try BlockingSocket(host: address.host, port: address.port)
        socket.setReceiveTimeout(0.2)
    }

    func write(_ bytes: [UInt8]) throws { try socket.writeAll(bytes) }
    func writeFrame(_ body: [UInt8]) throws { try write(FrameCodec.encode(body)) }
    func writeSealed(_ message: ClientMessage) throws -> [UInt8] {
        let frame = FrameCodec.encode(cipher!.seal(message.encoded()))
        try write(frame)
        return frame
    }

    /// The next frame body, nil at end of stream; fails after `timeout`.
    func readFrame(timeout: Double = 5) -> [UInt8]? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
        defer { buffer.deallocate() }
        while Date() < deadline {
            if let f = try? decoder.next() { return f }
            guard let n = try? socket.read(into: buffer) else { continue } // receive timeout: poll again
            if n == 0 { return nil }
            decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        XCTFail("no frame and no close within \(timeout) s")
        return nil
    }

    /// Reads until the relay closes; returns the error code it sent last, if any.
    func expectClosed(timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line) -> RelayErrorCode? {
        var last: RelayErrorCode?
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            guard let frame = readFrame(timeout: deadline.timeIntervalSinceNow) else { return last }
            if frame.count == 2, frame[0] == 0xEE { last = RelayErrorCode(rawValue: frame[1]); continue }
            if var c = cipher, let body = try? c.open(frame) {
                cipher = c
                if case .error(let code)? = RelayMessage.decode(body) { last = RelayErrorCode(rawValue: code) }
            }
        }
        XCTFail("relay did not close the connection", file: file, line: line)
        return last
    }

    func handshake(relayKey: [UInt8]) throws {
        let eph = AgreementKey.generate()
        try writeFrame(RelayHandshake.hello(ephemeral: eph.publicKey))
        let hello = try XCTUnwrap(readFrame())
        let (c, h) = try RelayHandshake.clientCipher(ephemeral: eph, relayStatic: relayKey, relayHello: hello)
        cipher = c
        transcript = h
        guard case .challenge(let ch)? = try readMessage() else { throw RelayClientError.protocolViolation("no challenge") }
        challenge = ch
    }

    func readMessage(timeout: Double = 5) throws -> RelayMessage? {
        guard let frame = readFrame(timeout: timeout) else { return nil }
        return RelayMessage.decode(try cipher!.open(frame))
    }

    func authenticate(_ key: SigningKey, tamper: Bool = false) throws {
        var signature = key.sign(RelayHandshake.authMessage(transcript: transcript, challenge: challenge))
        if tamper { signature[0] ^= 1 }
        _ = try writeSealed(.auth(mailboxKey: key.publicKey, signature: signature))
    }
}
