import XCTest
@testable import RChatCore

final class ContactCodeTests: XCTestCase {
    let relay = RelayAddress(host: "127.0.0.1", port: 7070, publicKey: [UInt8](repeating: 7, count: 32))

    func sample(name: String = "Sam") -> ContactCode {
        ContactCode(name: name, accountKey: [UInt8](repeating: 1, count: 32), deviceKey: [UInt8](repeating: 2, count: 32),
                    deviceCertificate: [UInt8](repeating: 3, count: 64), relay: relay, inviteToken: [UInt8](repeating: 4, count: 16),
                    signature: [UInt8](repeating: 5, count: 64))
    }

    func testRoundTrip() throws {
        let code = sample(name: "Sam 漢字 🙂")
        XCTAssertTrue(code.text.hasPrefix("rchat-2-"))
        XCTAssertFalse(code.text.contains(" "))
        XCTAssertEqual(try ContactCode(parsing: code.text), code)
        XCTAssertEqual(try ContactCode(parsing: "  \(code.text)\n"), code)
    }

    func testWhitespaceInsideAPastedCodeIsIgnored() throws {
        let code = sample(name: "Sam")
        let text = code.text
        // As a terminal selection across rows, a mail's line breaks, or spaces typed in.
        var broken = ""
        for (i, c) in text.enumerated() {
            if i > 0 && i % 37 == 0 { broken += i % 74 == 0 ? "\r\n" : " \n  " }
            broken.append(c)
        }
        XCTAssertEqual(try ContactCode(parsing: broken), code)
        XCTAssertEqual(try ContactCode(parsing: "rchat-2-\t" + text.dropFirst(8)), code)
        // Everything else is checked as before: a changed character still fails its checksum.
        var chars = Array(broken)
        let i = chars.count / 2 + (chars[chars.count / 2].isWhitespace ? 3 : 0)
        chars[i] = chars[i] == "A" ? "B" : "A"
        XCTAssertThrowsError(try ContactCode(parsing: String(chars))) { error in
            XCTAssertEqual(error as? ContactCode.ParseError, .checksumMismatch)
        }
        XCTAssertThrowsError(try ContactCode(parsing: String(broken.dropLast(12)))) { error in
            XCTAssertEqual(error as? ContactCode.ParseError, .truncated)
        }
    }

    func testEveryCutIsTruncated() {
        let text = sample().text
        for cut in stride(from: 8, to: text.count, by: 1) {
            let prefix = String(text.prefix(cut))
            XCTAssertThrowsError(try ContactCode(parsing: prefix)) { error in
                XCTAssertEqual(error as? ContactCode.ParseError, .truncated, "cut at \(cut)")
            }
        }
    }

    func testMistypedCharacterIsCaught() {
        var chars = Array(sample().text)
        let i = chars.count / 2
        chars[i] = chars[i] == "A" ? "B" : "A"
        XCTAssertThrowsError(try ContactCode(parsing: String(chars))) { error in
            XCTAssertEqual(error as? ContactCode.ParseError, .checksumMismatch)
        }
    }

    func testErrorsNameWhatIsWrong() {
        let text = sample().text
        let cases: [(String, ContactCode.ParseError)] = [
            ("hello", .notAContactCode),
            ("", .notAContactCode),
            (text.replacingOccurrences(of: "rchat-2-", with: "rchat-3-"), .unsupportedVersion("3")),
            (text.replacingOccurrences(of: "rchat-2-", with: "rchat-1-"), .unsigned),
            ("rchat-2-abc$def", .badCharacters),
            ("rchat-2-", .truncated),
            (text + "AAAA", .checksumMismatch),
        ]
        for (input, expected) in cases {
            XCTAssertThrowsError(try ContactCode(parsing: input)) { error in
                XCTAssertEqual(error as? ContactCode.ParseError, expected, input)
                XCTAssertFalse("\(error)".contains("\n"))
            }
        }
    }

    func testNames() {
        XCTAssertTrue(ContactCode.validName("Sam"))
        XCTAssertFalse(ContactCode.validName(""))
        XCTAssertFalse(ContactCode.validName(" Sam"))
        XCTAssertFalse(ContactCode.validName("Sa\u{7}m"))
        XCTAssertFalse(ContactCode.validName("Sam\u{202E}gnp.exe"), "a direction override")
        XCTAssertFalse(ContactCode.validName("Sam\u{2028}Bob"))
        XCTAssertTrue(ContactCode.validName("Sam 👨\u{200D}👩\u{200D}👧"), "a joined emoji is a name")
        XCTAssertFalse(ContactCode.validName(String(repeating: "x", count: 65)))
    }

    func testRelayAddress() throws {
        let a = try RelayAddress(parsing: relay.description)
        XCTAssertEqual(a, relay)
        let v6 = RelayAddress(host: "::1", port: 9, publicKey: relay.publicKey)
        XCTAssertEqual(try RelayAddress(parsing: v6.description), v6)
        XCTAssertTrue(v6.description.hasPrefix("[::1]:9/"))
        let key = Base64URL.encode(relay.publicKey)
        let bad: [(String, RelayAddress.ParseError)] = [
            ("127.0.0.1:7070", .missingKey), ("127.0.0.1:7070/abc", .badKey), ("127.0.0.1/\(key)", .missingPort),
            ("127.0.0.1:0/\(key)", .badPort), ("127.0.0.1:99999/\(key)", .badPort), (":7070/\(key)", .badHost),
            ("::1:7070/\(key)", .badHost),
        ]
        for (text, error) in bad {
            XCTAssertThrowsError(try RelayAddress(parsing: text)) { XCTAssertEqual($0 as? RelayAddress.ParseError, error, text) }
        }
    }
}
