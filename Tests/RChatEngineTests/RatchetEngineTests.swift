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
        let (alice, engine, sam, samIdentity) = try aliceWithRawSamInSession()
        let aliceIdentity = try alice.identity(), samContact = try alice.contact(named: "Sam")

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

    /// Issue 32, item 2: past the ratchet's bound of skipped keys, the oldest go; a frame
    /// whose key went is "couldn't be decrypted", and the engine's could-not-read notice
    /// names it, so the sender's recovery sends it again (as for a lost state). The frames
    /// whose keys were kept open, out of order, once each.
    func testAFrameWhoseSkippedKeyWasDroppedIsReportedAsCouldNotRead() throws {
        let (alice, _, sam, _) = try aliceWithRawSamInSession()
        // Sam seals 1,003 messages and sends the last first: Alice keeps 1,000 skipped keys.
        var ids: [MessageID] = []
        let frames = (0...Ratchet.maxSkipped + 2).map { n -> [UInt8] in
            let id = MessageID.random()
            ids.append(id)
            return sam.sealed(MessageContent.text("m\(n)").encoded(), id: id)
        }
        try sam.send(envelope: frames.last!)
        try untilDeadline("Alice stored the last one", seconds: 20) {
            try self.messages(alice, "Sam").contains { $0.id == ids.last! }
        }
        // The two oldest lost their keys; two of the kept ones open.
        for n in [0, 1, 2, 500] { try sam.send(envelope: frames[n]) }
        func named(_ frames: [SeenFrame]) -> [MessageID] {
            frames.filter { $0.kind == .notice }.flatMap { notice -> [MessageID] in
                guard let header = try? Envelope.openHeader(notice.envelope, conversation: sam.secret),
                      let read = try? CouldNotReadNotice.open(notice.body, conversation: sam.secret, session: header.sessionID,
                                                              signedBy: alice.device.publicKey) else { return [] }
                return read.messageIDs
            }
        }
        // One notice or more (the frames may come in two batches).
        try read(sam, "Alice's could-not-read notices naming them", seconds: 30) { Set(named($0)).isSuperset(of: [ids[0], ids[1]]) }
        XCTAssertEqual(Set(named(sam.seen)), [ids[0], ids[1]], "the two whose keys were dropped, and no other")
        try untilDeadline("Alice stored the two whose keys were kept", seconds: 20) {
            let stored = Set(try self.messages(alice, "Sam").map(\.id))
            return stored.contains(ids[2]) && stored.contains(ids[500])
        }
        XCTAssertFalse(try messages(alice, "Sam").contains { $0.id == ids[0] || $0.id == ids[1] })
        XCTAssertTrue(logLines.all.contains { $0.contains("a message from Sam cannot be decrypted on this device") })
    }
}
