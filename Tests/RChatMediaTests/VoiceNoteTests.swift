import Foundation
@testable import RChatMedia
import XCTest

final class VoiceNoteTests: XCTestCase {
    /// Sign changes of the first channel: a 440 Hz tone crosses zero 880 times a second.
    private func zeroCrossings(_ samples: [Int16], channels: Int) -> Int {
        let first = stride(from: 0, to: samples.count, by: channels).map { samples[$0] }
        return zip(first, first.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
    }

    func testASineWAVEncodesToOggOpusOfItsDurationAndDecodesBackToTheTone() throws {
        let dir = try temporaryDirectory(self)
        try writeSineWAV(dir + "/tone.wav", seconds: 1.5)

        let seconds = try VoiceNote.encode(wav: dir + "/tone.wav", to: dir + "/note.ogg")
        XCTAssertEqual(seconds, 1.5, accuracy: 0.001)
        XCTAssertEqual(fileMode(dir + "/note.ogg"), 0o600)
        XCTAssertTrue(VoiceNote.isOggOpus(path: dir + "/note.ogg"))
        let size = try readFile(dir + "/note.ogg").count
        XCTAssertLessThan(size, 12_000, "speech rate: 1.5 s at 24 kbit/s is about 4.5 KB, not the WAV's 144 KB")
        XCTAssertEqual(try VoiceNote.duration(ofOggOpus: dir + "/note.ogg"), 1.5, accuracy: 0.02)

        try VoiceNote.decode(ogg: dir + "/note.ogg", toWav: dir + "/back.wav")
        XCTAssertEqual(fileMode(dir + "/back.wav"), 0o600)
        let back = try readWAV(dir + "/back.wav")
        XCTAssertEqual(back.channels, 1)
        XCTAssertEqual(back.rate, 48_000)
        XCTAssertEqual(Double(back.samples.count), 72_000, accuracy: 960, "1.5 s at 48 kHz, within 20 ms")
        XCTAssertEqual(Double(zeroCrossings(back.samples, channels: 1)), 1_320, accuracy: 40, "still a 440 Hz tone")
    }

    func testStereoAt16kHzEncodesAndDecodesAsStereoAt48kHz() throws {
        let dir = try temporaryDirectory(self)
        try writeSineWAV(dir + "/tone.wav", seconds: 0.75, rate: 16_000, channels: 2)
        XCTAssertEqual(try VoiceNote.encode(wav: dir + "/tone.wav", to: dir + "/note.ogg"), 0.75, accuracy: 0.001)
        XCTAssertEqual(try VoiceNote.duration(ofOggOpus: dir + "/note.ogg"), 0.75, accuracy: 0.02)
        try VoiceNote.decode(ogg: dir + "/note.ogg", toWav: dir + "/back.wav")
        let back = try readWAV(dir + "/back.wav")
        XCTAssertEqual(back.channels, 2)
        XCTAssertEqual(back.rate, 48_000)
        XCTAssertEqual(Double(back.samples.count / 2), 36_000, accuracy: 960)
        XCTAssertEqual(Double(zeroCrossings(back.samples, channels: 2)), 660, accuracy: 30)
    }

    func testATruncatedOggIsAnErrorAndLeavesNoWAV() throws {
        let dir = try temporaryDirectory(self)
        try writeSineWAV(dir + "/tone.wav", seconds: 1.5)
        _ = try VoiceNote.encode(wav: dir + "/tone.wav", to: dir + "/note.ogg")
        let whole = try readFile(dir + "/note.ogg")
        // Cut inside a page, and exactly after a page (libopusfile would play either as far as it goes).
        let pageStarts = (1..<whole.count - 4).filter { whole[$0..<$0 + 4].elementsEqual("OggS".utf8) }
        let atPage = try XCTUnwrap(pageStarts.last)
        for (name, length) in [("half", whole.count / 2), ("at-page", atPage), ("header-only", 30)] {
            let path = "\(dir)/\(name).ogg"
            try writeFile(path, Array(whole.prefix(length)))
            XCTAssertThrowsError(try VoiceNote.duration(ofOggOpus: path), name) { error in
                guard case .notOggOpus(let at, _) = (error as? MediaError)?.reason else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual(at, path)
            }
            XCTAssertThrowsError(try VoiceNote.decode(ogg: path, toWav: dir + "/out.wav"), name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/out.wav"), "\(name): nothing left behind")
        }
    }

    func testTextAndWrongWAVsAreRefusedWithNothingWritten() throws {
        let dir = try temporaryDirectory(self)
        try writeFile(dir + "/words.ogg", Array("OggS is how this text starts, but it is text\n".utf8))
        try writeFile(dir + "/empty.ogg", [])
        XCTAssertFalse(VoiceNote.isOggOpus(path: dir + "/words.ogg"))
        XCTAssertFalse(VoiceNote.isOggOpus(path: dir + "/empty.ogg"))
        XCTAssertFalse(VoiceNote.isOggOpus(path: dir + "/missing.ogg"))
        XCTAssertThrowsError(try VoiceNote.duration(ofOggOpus: dir + "/words.ogg")) {
            guard case .notOggOpus = ($0 as? MediaError)?.reason else { return XCTFail("\($0)") }
        }

        // 8-bit samples, 96 kHz, 3 channels, text: each refused saying why, no Ogg left.
        var eightBit = WAV.header(channels: 1, sampleRate: 8_000, frames: 100)
        eightBit[34] = 8
        var fast = WAV.header(channels: 1, sampleRate: 8_000, frames: 100)
        fast.replaceSubrange(24..<28, with: withUnsafeBytes(of: UInt32(96_000).littleEndian, Array.init))
        let cases: [(String, [UInt8])] = [
            ("8-bit", eightBit + [UInt8](repeating: 1, count: 200)),
            ("96k", fast + [UInt8](repeating: 1, count: 200)),
            ("surround", WAV.header(channels: 3, sampleRate: 48_000, frames: 100) + [UInt8](repeating: 1, count: 600)),
            ("no-samples", WAV.header(channels: 1, sampleRate: 48_000, frames: 0)),
            ("text", Array("RIFF? no, words\n".utf8)),
        ]
        for (name, bytes) in cases {
            try writeFile("\(dir)/\(name).wav", bytes)
            XCTAssertThrowsError(try VoiceNote.encode(wav: "\(dir)/\(name).wav", to: dir + "/out.ogg"), name) { error in
                guard case .unsupportedWAV = (error as? MediaError)?.reason else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual("\(error)".split(separator: "\n").count, 1)
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/out.ogg"), name)
        }
    }

    /// A recorder stopped before writing its final sizes leaves a header claiming more (or zero):
    /// what the file holds is encoded.
    func testAWAVWhoseHeaderOverstatesItsDataEncodesWhatItHolds() throws {
        let dir = try temporaryDirectory(self)
        try writeSineWAV(dir + "/tone.wav", seconds: 1)
        var bytes = try readFile(dir + "/tone.wav")
        bytes.replaceSubrange(40..<44, with: [0xFF, 0xFF, 0xFF, 0x7F])
        try writeFile(dir + "/tone.wav", bytes)
        XCTAssertEqual(try VoiceNote.encode(wav: dir + "/tone.wav", to: dir + "/note.ogg"), 1, accuracy: 0.001)
        XCTAssertEqual(try VoiceNote.duration(ofOggOpus: dir + "/note.ogg"), 1, accuracy: 0.02)
    }
}
