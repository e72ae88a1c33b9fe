import RChatCore
import XCTest
@testable import RChatStore

final class ContactTests: StoreTestCase {
    func testNamesAreUniqueCaseInsensitivelyInEveryScript() throws {
        XCTAssertThrowsError(try store.addContact(Self.newContact("SAM"), at: 2)) {
            XCTAssertEqual($0 as? StoreError, .contactNameTaken("SAM"))
        }
        try store.addContact(Self.newContact("Ёлка"), at: 2)
        XCTAssertThrowsError(try store.addContact(Self.newContact("ёЛКА"), at: 3))
        try store.addContact(Self.newContact("Éva"), at: 2)
        XCTAssertEqual(try store.contact(named: "e\u{301}VA")?.name, "Éva", "decomposed and upper case finds it")
        XCTAssertEqual(try store.contact(named: "sAm")?.id, sam)
        XCTAssertNil(try store.contact(named: "Samuel"))
        XCTAssertThrowsError(try store.rename(contact: sam, to: "éva")) { XCTAssertEqual($0 as? StoreError, .contactNameTaken("éva")) }
        try store.rename(contact: sam, to: "Sammy")
        XCTAssertEqual(try store.contact(id: sam)?.name, "Sammy")
    }

    /// A message request looks its sender up by account key: through the index, so it costs
    /// the same however many strangers are stored (deleted contacts are found too).
    func testAContactIsFoundByAccountKeyThroughAnIndex() throws {
        let key = try XCTUnwrap(store.contact(id: sam)).accountKey
        XCTAssertEqual(try store.contact(accountKey: key)?.id, sam)
        try store.setDeleted(contact: sam, true)
        XCTAssertEqual(try store.contact(accountKey: key)?.id, sam)
        XCTAssertNil(try store.contact(accountKey: [9, 9, 9]))
        let plan = try store.database.query("EXPLAIN QUERY PLAN SELECT id FROM contacts WHERE account_key = ? ORDER BY id LIMIT 1",
                                            [.blob(key)]).map { try $0.string(at: 3) }.joined(separator: "; ")
        XCTAssertTrue(plan.contains("INDEX contacts_by_account_key (account_key=?)"), plan)
    }

    func testPinnedKeysAndWhenTheyChanged() throws {
        let before = try XCTUnwrap(store.contact(id: sam))
        XCTAssertEqual(before.keysChangedAt, 1_000)
        XCTAssertEqual(before.addedAt, 1_000)
        // Same keys, fresh certificate: not a key change.
        XCTAssertFalse(try store.updatePinnedKeys(contact: sam, accountKey: before.accountKey, deviceKey: before.deviceKey,
                                                  deviceCertificate: [5], at: 2_000))
        XCTAssertEqual(try store.contact(id: sam)?.keysChangedAt, 1_000)
        XCTAssertEqual(try store.contact(id: sam)?.deviceCertificate, [5])
        // A new device ("new phone", code entered again).
        XCTAssertTrue(try store.updatePinnedKeys(contact: sam, accountKey: before.accountKey, deviceKey: [42],
                                                 deviceCertificate: [6], at: 3_000))
        let after = try XCTUnwrap(store.contact(id: sam))
        XCTAssertEqual(after.deviceKey, [42])
        XCTAssertEqual(after.keysChangedAt, 3_000)
        XCTAssertThrowsError(try store.updatePinnedKeys(contact: ContactID(77), accountKey: [], deviceKey: [],
                                                        deviceCertificate: [], at: 1))
    }

    func testFlagsStateAndListing() throws {
        let alex = try store.addContact(Self.newContact("alex", key: 40), at: 5).id
        let request = try store.addContact({ var c = Self.newContact("Stranger", key: 80); c.state = .request; c.relayAddress = nil; return c }(), at: 6)
        XCTAssertEqual(request.state, .request)
        XCTAssertNil(request.relayAddress)
        XCTAssertEqual(try store.contacts().map(\.name), ["alex", "Sam", "Stranger"])

        try store.setBlocked(contact: alex, true)
        try store.setMuted(contact: sam, true)
        try store.setState(contact: sam, .keysDontMatch)
        try store.setRelayAddress(contact: alex, "10.0.0.1:1/key")
        let listed = Dictionary(uniqueKeysWithValues: try store.contacts().map { ($0.name, $0.displayState) })
        XCTAssertEqual(listed, ["alex": .blocked, "Sam": .keysDontMatch, "Stranger": .request])
        XCTAssertEqual(try store.contact(id: alex)?.relayAddress, "10.0.0.1:1/key")

        try store.setDeleted(contact: alex, true)
        XCTAssertEqual(try store.contacts().map(\.name), ["Sam", "Stranger"])
        XCTAssertEqual(try store.contacts(includingDeleted: true).count, 3)
        XCTAssertEqual(try store.contact(named: "ALEX")?.isDeleted, true)
        XCTAssertThrowsError(try store.setMuted(contact: ContactID(404), true)) {
            XCTAssertEqual($0 as? StoreError, .unknownContact(ContactID(404)))
        }
    }

    func testDisplayStatePrecedence() {
        for state in ContactState.allCases {
            for blocked in [false, true] {
                for muted in [false, true] {
                    let shown = ContactDisplayState.of(state: state, isBlocked: blocked, isMuted: muted)
                    let expected: ContactDisplayState =
                        state == .keysDontMatch ? .keysDontMatch
                        : blocked ? .blocked
                        : muted ? .muted
                        : state == .request ? .request : .ok
                    XCTAssertEqual(shown, expected, "\(state) blocked=\(blocked) muted=\(muted)")
                }
            }
        }
        let shown: [ContactDisplayState] = [.ok, .keysDontMatch, .blocked, .muted, .request]
        XCTAssertEqual(shown.map(\.rawValue), ["ok", "keys-dont-match", "blocked", "muted", "request"])
    }
}
