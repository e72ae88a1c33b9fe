import XCTest
import Foundation
@testable import RChatCore

final class EncodingTests: XCTestCase {
    func testHexRoundTripAndRejects() {
        XCTAssertEqual(Hex.encode([0x00, 0xab, 0xff]), "00abff")
        XCTAssertEqual(Hex.decode("00ABff"), [0x00, 0xab, 0xff])
        for bad in ["0", "zz", "0g", "a b"] { XCTAssertNil(Hex.decode(bad), bad) }
    }

    func testMessageIDIs128BitHexStartingWithItsMillisecond() {
        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        let a = MessageID.random(), b = MessageID.random()
        let after = UInt64(Date().timeIntervalSince1970 * 1000)
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(a.hex.count, 32)
        XCTAssertEqual(MessageID(hex: a.hex), a)
        XCTAssertEqual(MessageID(bytes: a.bytes), a)
        XCTAssertTrue((before...after).contains(a.milliseconds), "\(a.milliseconds) not in \(before)...\(after)")
        XCTAssertNil(MessageID(hex: "abcd"))
        XCTAssertNil(MessageID(bytes: [UInt8](repeating: 1, count: 15)))
        XCTAssertNil(MessageID(bytes: [UInt8](repeating: 1, count: 17)))
    }

    func testMessageIDsSortByTimeThenRandomBits() {
        var zeros = FixedGenerator(words: [0, 0]), ones = FixedGenerator(words: [.max, .max])
        let early = MessageID.make(milliseconds: 1_000, using: &ones)
        let late = MessageID.make(milliseconds: 1_001, using: &zeros)
        XCTAssertLessThan(early, late, "a later millisecond sorts later, whatever the random bits")
        XCTAssertEqual(late.hex, "0000000003e900000000000000000000")
        XCTAssertEqual(early.hex, "0000000003e8ffffffffffffffffffff")
        XCTAssertTrue(early.bytes.lexicographicallyPrecedes(late.bytes), "bytes sort as ids do (the store's index)")
        // Only 48 bits of time: a clock past them wraps rather than spilling into the random bits.
        XCTAssertEqual(MessageID.make(milliseconds: 1 << 48 | 5, using: &zeros).milliseconds, 5)
    }

    func testBase64URLKnownValues() {
        // RFC 4648 §10 vectors, unpadded, URL alphabet.
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64URL.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64URL.decode(encoded), Array(plain.utf8))
        }
        XCTAssertEqual(Base64URL.encode([0xfb, 0xff]), "-_8")
        for bad in ["Z", "Zm9v=", "Zm+v", "Zm/v", "Zh"] { XCTAssertNil(Base64URL.decode(bad), bad) }
    }

    func testCRC32KnownValue() {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926)
    }

    func testByteReaderRefusesReadsPastTheEnd() throws {
        var w = ByteWriter()
        w.u8(1); w.u16(0x0203); w.u32(0x0405_0607); w.u64(0x0809_0a0b_0c0d_0e0f); w.string("hé"); w.long([9, 9])
        var r = ByteReader(w.bytes)
        XCTAssertEqual(try r.u8(), 1)
        XCTAssertEqual(try r.u16(), 0x0203)
        XCTAssertEqual(try r.u32(), 0x0405_0607)
        XCTAssertEqual(try r.u64(), 0x0809_0a0b_0c0d_0e0f)
        XCTAssertEqual(try r.string(), "hé")
        XCTAssertEqual(try r.long(), [9, 9])
        XCTAssertTrue(r.isAtEnd)
        XCTAssertThrowsError(try r.u8())
        var short = ByteReader([0, 5, 1])
        XCTAssertThrowsError(try short.short())
    }

    func testClockHonoursFakeNow() {
        XCTAssertEqual(SystemClock(environment: ["RCHAT_FAKE_NOW": "1700000000"]).now(), 1_700_000_000)
        XCTAssertTrue(SystemClock(environment: ["RCHAT_FAKE_NOW": "5"]).isFake)
        let real = SystemClock(environment: [:])
        XCTAssertFalse(real.isFake)
        XCTAssertGreaterThan(real.now(), 1_700_000_000)
        let manual = ManualClock(10)
        manual.advance(5)
        XCTAssertEqual(manual.now(), 15)
    }
}

final class JSONLineTests: XCTestCase {
    func testKeysInOrderAndEscaping() throws {
        let line = JSONLine.object([("type", .string("message")), ("text", .string("a\"b\\c\nd\u{1}é🙂")), ("n", .int(3)),
                                    ("ok", .bool(false)), ("status", .null), ("ids", .strings(["x", "y"]))])
        XCTAssertEqual(line, #"{"type":"message","text":"a\"b\\c\nd\u0001é🙂","n":3,"ok":false,"status":null,"ids":["x","y"]}"#)
        // And it is real JSON.
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        XCTAssertEqual(parsed?["text"] as? String, "a\"b\\c\nd\u{1}é🙂")
    }
}

/// Returns the words it was given, in turn.
struct FixedGenerator: RandomNumberGenerator {
    var words: [UInt64]
    var index = 0
    mutating func next() -> UInt64 {
        defer { index += 1 }
        return words[index % words.count]
    }
}
