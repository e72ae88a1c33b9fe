import XCTest
import RChatCore
@testable import RChatEngine

/// The export's bytes: version 2 keeps whether someone is known only through a group and the
/// code kept for them; a version-1 export (contacts only) still opens; a damaged one is
/// refused in one line.
final class AccountBackupTests: XCTestCase {
    private func backup(_ contacts: [AccountBackup.Contact]) -> AccountBackup {
        AccountBackup(name: "Carol", relay: "127.0.0.1:7070/" + String(repeating: "A", count: 43),
                      accountSeed: Array(repeating: 7, count: 32), inviteSalt: Array(repeating: 3, count: 16),
                      mailboxSeed: Array(repeating: 9, count: 32), settings: ["receipt-window-ms": "0"], contacts: contacts)
    }

    private func person(_ name: String, member: Bool, code: String?) -> AccountBackup.Contact {
        AccountBackup.Contact(name: name, accountKey: Array(repeating: member ? 1 : 2, count: 32),
                              deviceKey: Array(repeating: 4, count: 32), deviceCertificate: Array(repeating: 5, count: 64),
                              relay: "127.0.0.1:7070", inviteToken: [6, 6], blocked: !member, muted: member, member: member, code: code)
    }

    func testAMemberAndTheirCodeComeBackAsTheyWent() throws {
        let written = backup([person("Alice", member: false, code: "rchat1-alice"), person("Bob", member: true, code: "rchat1-bob"),
                              person("Dan", member: false, code: nil)])
        let bytes = written.encoded()
        XCTAssertEqual(Array(bytes.prefix(16)), Array("rchat account v2".utf8))
        let read = try AccountBackup(decoding: bytes)
        XCTAssertEqual(read, written)
        XCTAssertEqual(read.contacts.map(\.member), [false, true, false])
        XCTAssertEqual(read.contacts.map(\.code), ["rchat1-alice", "rchat1-bob", nil])
    }

    /// What version 1 wrote: the same fields without kind and code after each contact.
    func testAVersionOneExportStillOpensWithContactsOnly() throws {
        var w = ByteWriter(capacity: 256)
        w.raw(Array("rchat account v1".utf8))
        w.string("Carol"); w.string("127.0.0.1:7070/" + String(repeating: "A", count: 43))
        w.short(Array(repeating: 7, count: 32)); w.short(Array(repeating: 3, count: 16)); w.short(Array(repeating: 9, count: 32))
        w.u32(0)
        w.u32(1)
        w.string("Alice"); w.short(Array(repeating: 2, count: 32)); w.short(Array(repeating: 4, count: 32))
        w.short(Array(repeating: 5, count: 64)); w.string("127.0.0.1:7070"); w.short([6, 6]); w.u8(0); w.u8(1)
        let read = try AccountBackup(decoding: w.bytes)
        XCTAssertEqual(read.contacts.count, 1)
        XCTAssertEqual(read.contacts[0].name, "Alice")
        XCTAssertFalse(read.contacts[0].member)
        XCTAssertNil(read.contacts[0].code)
        XCTAssertTrue(read.contacts[0].muted)
    }

    func testAnUnknownKindOrACutExportIsRefusedInOneLine() throws {
        var bytes = backup([person("Bob", member: true, code: "c")]).encoded()
        // The kind byte sits before the code's length (u16) and its one byte, at the end.
        let kind = bytes.count - 1 - 2 - 1
        XCTAssertEqual(bytes[kind], 1)
        bytes[kind] = 2
        XCTAssertThrowsError(try AccountBackup(decoding: bytes)) { XCTAssertEqual("\($0)", "\(EngineError.crypto("the account export is damaged"))") }
        let cut = Array(backup([person("Bob", member: true, code: "c")]).encoded().dropLast(2))
        XCTAssertThrowsError(try AccountBackup(decoding: cut)) { XCTAssertEqual("\($0)", "\(EngineError.crypto("the account export is damaged"))") }
    }
}
