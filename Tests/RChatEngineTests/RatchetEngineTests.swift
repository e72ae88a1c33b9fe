import Foundation
import XCTest
import RChatCore
@testable import RChatCrypto
import RChatRelayClient
@testable import RChatEngine

/// The Double Ratchet with a real engine, a real relay and the real store (issue 32): a copy
/// of Alice's whole state — her database files and her device key — taken once her engine
/// stopped opens none of the frames either side sent before, as the relay handed them; and
/// no earlier sealed state of the session is left in `rchat.db` or its WAL.
final class RatchetEngineTests: RelayEngineTestCase {
    /// Whether `needle` occurs in the file at `path` (false when there is no such file).
    private func file(_ path: String, holds needle: ArraySlice<UInt8>) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return [UInt8](data).firstRange(of: needle) != nil
    }

    func testACopyOfTheWholeStateOpensNothingSentBeforeAndNoEarlierStateIsLeftInTheFiles() throws {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let samAccount = try account("Sam", relay: address)
        let samIdentity = try samAccount.identity(), aliceIdentity = try alice.identity()
        _ = try alice.addContact(samIdentity.contactCode(device: samAccount.device), name: nil)
        let samContact = try alice.contact(named: "Sam")
        let engine = try startEngine(alice, logged: true)
        let sam = RawPeer(try rawSessionStartingOver(as: samAccount, mailboxKey: samIdentity.mailboxKey, with: alice, relay: address))
        try sayHi(sam)

        // Rounds both ways; Alice's engine stores Sam's, Sam reads Alice's as the relay hands them.
        func round(_ n: Int) throws {
            try sam.send(text: "from Sam \(n)")
            _ = try alice.send(to: "Sam", content: .text("from Alice \(n)"))
            engine.engine.wake()
            try read(sam, "Alice's message \(n)", seconds: 20) { seen in
                seen.contains { $0.kind == .message && $0.body == MessageContent.text("from Alice \(n)").encoded() }
            }
            try untilDeadline("Alice stored Sam's message \(n)", seconds: 20) {
                try self.messages(alice, "Sam").contains { $0.text == "from Sam \(n)" }
            }
        }
        for n in 0..<3 { try round(n) }
        // Alice's sealed state as her store holds it now, and where: the search finds it.
        let databasePath = alice.locations.databasePath
        let earlier = try XCTUnwrap(alice.store.sealedState(contact: samContact.id)).sealed
        let probe = earlier[earlier.count / 2 - 32..<earlier.count / 2 + 32]
        XCTAssertTrue(file(databasePath, holds: probe) || file(databasePath + "-wal", holds: probe), "the search finds a state that is there")
        for n in 3..<6 { try round(n) }
        // The engine stops: its sessions stored, the WAL truncated.
        engine.stop()
        engines.removeAll()

        // The whole state, copied as someone who took the machine would.
        let copyHome = directory.appendingPathComponent("copy-home").path, copyDevice = directory.appendingPathComponent("copy-device").path
        try FileManager.default.copyItem(atPath: alice.locations.home, toPath: copyHome)
        try FileManager.default.copyItem(atPath: alice.locations.deviceDirectory, toPath: copyDevice)
        let copy = try AccountService(locations: Locations(home: copyHome, deviceDirectory: copyDevice))
        let state = try XCTUnwrap(try copy.savedState(of: try copy.contact(named: "Sam"), in: copy.store))
        let aliceSecret = try ConversationSecret(myAccount: aliceIdentity.accountKey, peerAccountKey: samIdentity.accountKey.publicKey)

        // (a) What Sam sent: none opens with the copy.
        XCTAssertGreaterThanOrEqual(sam.sent.count, 7)
        for (n, frame) in sam.sent.enumerated() {
            var tryIt = state
            let header = try Envelope.openHeader(frame, conversation: aliceSecret)
            XCTAssertThrowsError(try tryIt.open(frame, header: header, at: Int64(Date().timeIntervalSince1970)), "Sam's frame \(n)")
        }
        // What Alice sent (messages, receipts, cover): no key the copy holds, nor any chain
        // step of one, opens any of them.
        var keys: [SecretBytes] = []
        for secret in state.heldSecrets {
            keys.append(secret)
            var chain = secret
            for _ in 0..<64 { let (message, next) = Ratchet.chainStep(chain); keys.append(message); chain = next }
        }
        let samSecret = sam.secret
        XCTAssertGreaterThanOrEqual(sam.seen.count, 6)
        for frame in sam.seen {
            let header = try Envelope.openHeader(frame.envelope, conversation: samSecret)
            let opened = keys.contains { key in
                [Handshake.Role.initiator, .responder].contains { (try? Envelope.openBody(frame.envelope[...], header: header, key: key, senderRole: $0)) != nil }
            }
            XCTAssertFalse(opened, "Alice's \(frame.kind) opened with a key of the copy")
        }
        // The state read mid-way is gone from the files, WAL included.
        for path in [copyHome + "/rchat.db", copyHome + "/rchat.db-wal", databasePath, databasePath + "-wal"] {
            XCTAssertFalse(file(path, holds: probe), "an earlier sealed state is left in \(path)")
        }
    }
}
