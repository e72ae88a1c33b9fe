import Foundation
import XCTest
import RChatMedia
#if canImport(Glibc)
import Glibc
#endif

/// Files end to end, with real `rchat-relay` and `rchat sync` processes: a file arrives
/// byte for byte and is Delivered only when whole; a receiver or a sender killed mid-way
/// goes on where it stopped; bad input is one line and stores nothing.
final class AttachmentTests: RecoveryTestCase {
    /// `rchat list --json`'s attachment object of message `id`.
    func attachment(_ person: String, _ name: String, _ id: String) throws -> [String: Any] {
        let run = try world.box.rchat(person, ["list", name, "--json"])
        try world.expectSuccess(run)
        for line in run.lines {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
            if object["id"] as? String == id { return try XCTUnwrap(object["attachment"] as? [String: Any], line) }
        }
        throw TimedOut(what: "message \(id) in \(person)'s list", seconds: 0, context: run.stdout + world.diagnostics())
    }

    func received(_ person: String, _ name: String, _ id: String) throws -> Int {
        let object = try attachment(person, name, id)
        return try XCTUnwrap(object["received"] as? Int)
    }

    /// A file of `bytes` random bytes in the test's box.
    func randomFile(_ name: String, bytes: Int) throws -> (path: String, data: Data) {
        var g = SystemRandomNumberGenerator()
        var bytesOut = [UInt8](repeating: 0, count: bytes)
        for i in 0..<bytes { bytesOut[i] = UInt8(truncatingIfNeeded: g.next()) }
        let data = Data(bytesOut)
        let path = world.box.path(name)
        try data.write(to: URL(fileURLWithPath: path))
        return (path, data)
    }

    func sendFile(_ person: String, to name: String, _ path: String, _ extra: [String] = []) throws -> String {
        let run = try world.box.rchat(person, ["send", name, "--file", path] + extra)
        try world.expectSuccess(run)
        XCTAssertEqual(run.lines.count, 1, run.stdout)
        return run.lines.first ?? ""
    }

    func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : nil
    }

    func testAFileArrivesWholeByteForByteAndIsDeliveredOnlyThen() throws {
        try chattingPair()
        let (path, data) = try randomFile("report.bin", bytes: 5 * 1024 * 1024 + 123)
        let id = try sendFile("alice", to: "Sam", path)
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 60)

        let mine = try attachment("alice", "Sam", id)
        XCTAssertEqual(mine["kind"] as? String, "file")
        XCTAssertEqual(mine["name"] as? String, "report.bin")
        XCTAssertEqual(mine["size"] as? Int, data.count)
        XCTAssertEqual(mine["received"] as? Int, data.count)
        let theirs = try attachment("sam", "Alice", id)
        XCTAssertEqual(theirs["received"] as? Int, data.count)
        let receivedPath = try XCTUnwrap(theirs["path"] as? String)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: receivedPath)), data, "the same bytes")
        XCTAssertTrue(receivedPath.hasPrefix(world.box.path("sam-home") + "/"), receivedPath)
        XCTAssertEqual(mode(receivedPath), 0o600)
        XCTAssertEqual(mode((receivedPath as NSString).deletingLastPathComponent), 0o700)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(mine["path"] as? String))), data, "the sent copy")
        // One copy on each side, nothing left half-way: the sender keeps only the plain copy
        // (chunks are encrypted from it as they go), the receiver no partial file.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: world.box.path("alice-home/files")), ["sent"])
        try world.eventually("the partial file is removed", timeout: 10) {
            ((try? FileManager.default.contentsOfDirectory(atPath: self.world.box.path("sam-home/files/partial"))) ?? []).isEmpty
        }
        XCTAssertTrue(world.syncLog("sam").contains("a file from Alice arrived whole (\(data.count) bytes, 86 chunks, 86 written in this run)"),
                      world.diagnostics())
        try world.eventually("Sam's sync alerts", timeout: 10) { self.world.syncLog("sam").contains("Alice: File") }
        XCTAssertFalse(world.syncLog("sam").contains("report"), "never the name")

        // `save` copies it out; a path that exists is refused and left alone.
        let out = world.box.path("saved.bin")
        let save = try world.box.rchat("sam", ["save", "Alice", id, out])
        try world.expectSuccess(save)
        XCTAssertEqual(save.lines, [out])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), data)
        XCTAssertFailsCleanly(try world.box.rchat("sam", ["save", "Alice", id, out]), status: 2, mentions: "already exists")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// The relay, with `--persist` (what it holds survives a restart) and a quota of `items`
    /// per mailbox: a file larger than that is taken only in part, the rest waits Sending.
    func restartRelay(quota items: Int) throws {
        world.stopRelay(signal: SIGTERM)
        _ = try world.startRelay(samePort: true, arguments: ["--persist", world.box.path("relay.db"), "--quota", String(items)])
    }

    /// Alice and Sam chatting, then Sam away; Alice sends a file of which the relay (with
    /// `--persist`, quota 100 items) takes only part and refuses the rest, so it stays Sending.
    func partOfAFileTakenForSam(_ name: String, bytes: Int) throws -> (id: String, data: Data) {
        try restartRelay(quota: 100)
        world.steadyTraffic = "off"  // it counts the items held: no dummies among them
        try chattingPair()
        world.stopSync("sam")
        let (path, data) = try randomFile(name, bytes: bytes)
        let id = try sendFile("alice", to: "Sam", path)
        try world.eventually("the relay refuses the rest of the file", timeout: 60) {
            self.world.syncLog("alice").contains("the relay refused part of a file")
        }
        // The refusal is logged as the answers come; what the relay took is stored with the
        // batch's commit, a moment later.
        try world.eventually("Alice stored that the relay took part of it", timeout: 30) {
            try self.received("alice", "Sam", id) > 0
        }
        return (id, data)
    }

    /// Part of a file is held for Sam (the relay's quota stops the rest); Sam's sync stores
    /// that part and is SIGKILLed; once the relay takes the rest, the next sync writes only
    /// the chunks it does not have, and the file is whole and Delivered.
    func testAReceiverKilledMidwayGoesOnWithoutFetchingWhatItStored() throws {
        let (id, data) = try partOfAFileTakenForSam("big.bin", bytes: 8 * 1024 * 1024)
        let chunks = 137  // of 60 KiB: more than the quota of 100 items lets the relay hold
        world.stopSync("alice")
        let held = try received("alice", "Sam", id) / (60 * 1024)
        XCTAssertGreaterThan(held, 0)
        XCTAssertLessThan(held, chunks)

        try world.startSync("sam")
        try world.eventually("Sam stored what the relay held", timeout: 60) {
            try self.world.list("sam", "Alice").contains { $0.id == id } && self.received("sam", "Alice", id) == held * 60 * 1024
        }
        world.crashSync("sam")
        // The list says how far it came.
        let percent = held * 60 * 1024 * 100 / data.count
        let line = try world.box.rchat("sam", ["list", "Alice"]).lines.first { $0.hasSuffix(id) }
        XCTAssertTrue(line?.contains("File: big.bin (8.0 MB)  (\(percent)% here)  ") == true, line ?? "no line")

        try restartRelay(quota: 10_000)
        try world.startSync("alice")
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 90)
        let got = try XCTUnwrap(try attachment("sam", "Alice", id)["path"] as? String)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: got)), data)
        let log = world.syncLog("sam")
        XCTAssertTrue(log.contains("receiving the rest of a file from Alice: \(held) of \(chunks) chunks were here"), world.diagnostics())
        XCTAssertTrue(log.contains("a file from Alice arrived whole (\(data.count) bytes, \(chunks) chunks, \(chunks - held) written in this run)"),
                      world.diagnostics())
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// The relay takes part of the file (its quota refuses the rest) and Alice's sync is
    /// SIGKILLed: the next one sends only what the relay did not take, and Sam gets it whole.
    func testASenderKilledMidwaySendsOnlyTheRest() throws {
        let (id, data) = try partOfAFileTakenForSam("upload.bin", bytes: 8 * 1024 * 1024)
        world.crashSync("alice")
        let taken = try received("alice", "Sam", id) / (60 * 1024)
        XCTAssertGreaterThan(taken, 0)
        XCTAssertLessThan(taken, 137, "killed before the relay took it all")
        XCTAssertEqual(try world.status("alice", "Sam", id), "Sending")

        try restartRelay(quota: 10_000)
        try world.startSync("alice")
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 90)
        let got = try XCTUnwrap(try attachment("sam", "Alice", id)["path"] as? String)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: got)), data)
        XCTAssertTrue(world.syncLog("alice").contains("sending the rest of a file to Sam: \(taken) of 137 chunks were taken before"),
                      world.diagnostics())
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// The relay (with `--persist`) took part of the file and is SIGKILLed; it comes back:
    /// what it had taken is still held, the sender sends the rest, and Sam gets it whole, once.
    func testARelayRestartWithPersistGoesOnWhereItStopped() throws {
        let (id, data) = try partOfAFileTakenForSam("through.bin", bytes: 8 * 1024 * 1024)
        world.stopRelay(signal: SIGKILL)
        _ = try world.startRelay(samePort: true, arguments: ["--persist", world.box.path("relay.db")])
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 90)
        let got = try XCTUnwrap(try attachment("sam", "Alice", id)["path"] as? String)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: got)), data)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == id }.count, 1, "shown once")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Sam reinstalls on the same machine while a file waits for him: the file cannot be
    /// read there, and Alice's side resends it by itself (Resent), as for text.
    func testAReinstallResendsAFileAutomatically() throws {
        try chattingPair()
        world.stopSync("sam")
        let (path, data) = try randomFile("held.bin", bytes: 300 * 1024)
        let id = try sendFile("alice", to: "Sam", path)
        try world.waitForStatus("alice", "Sam", id, "Sent", timeout: 30)
        try world.reinstall("sam")
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 60)
        XCTAssertEqual(try world.list("alice", "Sam").first { $0.id == id }?.resent, true)
        let got = try XCTUnwrap(try attachment("sam", "Alice", id)["path"] as? String)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: got)), data)
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// A voice message recorded from a generated WAV (no microphone here): encoded to Ogg
    /// Opus, sent `--as voice`, it arrives whole with its duration; the alert says "Voice
    /// message", never the name.
    func testAVoiceMessageRoundTripsWithItsDuration() throws {
        try chattingPair()
        let wav = world.box.path("memo.wav")
        try Self.writeSineWAV(wav, seconds: 2.5)
        let ogg = world.box.path("memo.ogg")
        let duration = try VoiceNote.encode(wav: wav, to: ogg)
        XCTAssertEqual(duration, 2.5, accuracy: 0.02)
        let id = try sendFile("alice", to: "Sam", ogg, ["--as", "voice"])
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 30)
        let theirs = try attachment("sam", "Alice", id)
        XCTAssertEqual(theirs["kind"] as? String, "voice")
        let path = try XCTUnwrap(theirs["path"] as? String)
        XCTAssertEqual(try VoiceNote.duration(ofOggOpus: path), duration, accuracy: 0.001)
        try world.eventually("Sam's sync alerts", timeout: 10) { self.world.syncLog("sam").contains("Alice: Voice message") }
        XCTAssertFalse(world.syncLog("sam").contains("memo"), "never the name in an alert or a log line")
        // Without --as voice, the same file is a file.
        let plain = try sendFile("alice", to: "Sam", ogg)
        XCTAssertEqual(try attachment("alice", "Sam", plain)["kind"] as? String, "file")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// A 440 Hz tone as 16-bit mono PCM WAV at 48 kHz.
    static func writeSineWAV(_ path: String, seconds: Double) throws {
        let rate = 48_000, frames = Int(seconds * Double(rate))
        var w = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { w.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { w.append(contentsOf: $0) } }
        w.append(contentsOf: Array("RIFF".utf8)); u32(36 + frames * 2); w.append(contentsOf: Array("WAVE".utf8))
        w.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(1); u32(rate); u32(rate * 2); u16(2); u16(16)
        w.append(contentsOf: Array("data".utf8)); u32(frames * 2)
        for i in 0..<frames {
            let sample = Int16(12_000 * sin(2 * Double.pi * 440 * Double(i) / Double(rate)))
            withUnsafeBytes(of: sample.littleEndian) { w.append(contentsOf: $0) }
        }
        try w.write(to: URL(fileURLWithPath: path))
    }

    func testBadFilesAreOneLineAndStoreNothing() throws {
        try world.makePair()
        let dir = world.box.path("a-directory")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let empty = world.box.path("empty.txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        let text = world.box.path("notes.txt")
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: text))
        let (big, _) = try randomFile("big.bin", bytes: 2 * 1024 * 1024)
        try world.expectSuccess(world.box.rchat("alice", ["settings", "max-attachment-mb", "1"]))
        let cases: [(args: [String], mentions: String)] = [
            (["send", "Sam", "--file", world.box.path("missing.bin")], "no file at"),
            (["send", "Sam", "--file", dir], "is a directory"),
            (["send", "Sam", "--file", empty], "is empty"),
            (["send", "Sam", "--file", big], "the limit is 1 MB"),
            (["send", "Sam", "--file", text, "--as", "voice"], "not a voice message"),
            (["send", "Sam", "--file", text, "--as", "picture"], "photo, voice or file"),
            (["send", "Sam", "--file", text, "--as", "photo"], "not a photo"),
            (["send", "Sam", "hello", "--as", "file"], "--as goes with --file"),
            (["send", "Nobody", "--file", text], "no contact named Nobody"),
        ]
        for c in cases {
            XCTAssertFailsCleanly(try world.box.rchat("alice", c.args), status: 2, mentions: c.mentions)
        }
        XCTAssertEqual(try world.list("alice", "Sam"), [], "nothing stored")
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: world.box.path("alice-home/files/sent"))) ?? [], [])
        // An image is a photo without --as; the kind shows in the list.
        // A 1×1 PNG: what the image decoders read is a photo.
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
                        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
                        0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
                        0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
                        0x42, 0x60, 0x82])
        let picture = world.box.path("cat.png")
        try png.write(to: URL(fileURLWithPath: picture))
        let id = try sendFile("alice", to: "Sam", picture)
        XCTAssertEqual(try attachment("alice", "Sam", id)["kind"] as? String, "photo")
        XCTAssertEqual(try world.list("alice", "Sam").first?.text, "Photo: cat.png (67 B)")
        // A file that only starts like one is a file.
        var fake = Data(png.prefix(8))
        fake.append(Data(count: 100))
        let notPicture = world.box.path("fake.png")
        try fake.write(to: URL(fileURLWithPath: notPicture))
        XCTAssertEqual(try attachment("alice", "Sam", try sendFile("alice", to: "Sam", notPicture))["kind"] as? String, "file")
    }
}
