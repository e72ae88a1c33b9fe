import Foundation
@testable import RChatMedia
import XCTest

final class AudioToolsTests: XCTestCase {
    /// An executable shell script `name` in `directory`.
    private func script(_ directory: String, _ name: String, _ body: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try writeFile("\(directory)/\(name)", Array("#!/bin/sh\n\(body)\n".utf8), mode: 0o755)
    }

    func testTheRecorderIsPipeWiresWhenThereElseALSAsElseNone() throws {
        let dir = try temporaryDirectory(self)
        try script(dir + "/alsa", "arecord", "exit 0")
        try script(dir + "/both", "arecord", "exit 0")
        try script(dir + "/both", "pw-record", "exit 0")
        try script(dir + "/pipewire", "pw-record", "exit 0")
        try FileManager.default.createDirectory(atPath: dir + "/none", withIntermediateDirectories: true)
        try writeFile(dir + "/none/arecord", Array("#!/bin/sh\n".utf8), mode: 0o644)   // not executable
        let out = dir + "/rec.wav"

        let alsa = try XCTUnwrap(AudioTools.recorder(to: out, environment: ["PATH": dir + "/alsa"]))
        XCTAssertEqual(alsa.executable, dir + "/alsa/arecord")
        XCTAssertEqual(alsa.arguments, ["-q", "-t", "wav", "-f", "S16_LE", "-r", "48000", "-c", "1", out])
        let both = try XCTUnwrap(AudioTools.recorder(to: out, environment: ["PATH": dir + "/both"]))
        XCTAssertEqual(both.executable, dir + "/both/pw-record")
        XCTAssertEqual(both.arguments, ["--rate", "48000", "--channels", "1", "--format", "s16", out])
        // pw-record wins over arecord even in a later PATH directory.
        let order = try XCTUnwrap(AudioTools.recorder(to: out, environment: ["PATH": "\(dir)/alsa:\(dir)/pipewire"]))
        XCTAssertEqual(order.executable, dir + "/pipewire/pw-record")
        XCTAssertNil(AudioTools.recorder(to: out, environment: ["PATH": dir + "/none"]))
        XCTAssertNil(AudioTools.recorder(to: out, environment: ["PATH": ""]))
        XCTAssertNil(AudioTools.recorder(to: out, environment: [:]))
    }

    func testThePlayerIsPwPlayWhenThereElseAplayElseNone() throws {
        let dir = try temporaryDirectory(self)
        try script(dir + "/alsa", "aplay", "exit 0")
        try script(dir + "/both", "aplay", "exit 0")
        try script(dir + "/both", "pw-play", "exit 0")
        try FileManager.default.createDirectory(atPath: dir + "/none", withIntermediateDirectories: true)

        XCTAssertEqual(AudioTools.player(of: "/x.wav", environment: ["PATH": dir + "/alsa"]),
                       AudioTool(executable: dir + "/alsa/aplay", arguments: ["-q", "/x.wav"]))
        XCTAssertEqual(AudioTools.player(of: "/x.wav", environment: ["PATH": dir + "/both"]),
                       AudioTool(executable: dir + "/both/pw-play", arguments: ["/x.wav"]))
        XCTAssertNil(AudioTools.player(of: "/x.wav", environment: ["PATH": dir + "/none"]))
    }

    /// A fake recorder that copies a generated tone to its last argument and records until SIGINT.
    private func fakeRecorder(_ dir: String, body: String? = nil) throws -> AudioTool {
        try writeSineWAV(dir + "/source.wav", seconds: 1.5)
        try script(dir + "/bin", "arecord", body ?? """
            for out; do :; done
            echo $$ > "\(dir)/pid"
            trap 'exit 0' INT
            cp "\(dir)/source.wav" "$out"
            while :; do sleep 0.05; done
            """)
        return try XCTUnwrap(AudioTools.recorder(to: dir + "/rec.wav", environment: ["PATH": dir + "/bin"]))
    }

    private func recorderPID(_ dir: String) throws -> pid_t {
        eventually("the recorder writes its pid") { (try? String(contentsOfFile: dir + "/pid", encoding: .utf8))?.hasSuffix("\n") == true }
        return try XCTUnwrap(pid_t(try String(contentsOfFile: dir + "/pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    func testFinishStopsTheRecorderWithSIGINTAndReturnsAWAVThatEncodes() throws {
        let dir = try temporaryDirectory(self)
        let tool = try fakeRecorder(dir)
        let recording = try Recording(tool: tool, path: dir + "/rec.wav")
        XCTAssertEqual(fileMode(dir + "/rec.wav"), 0o600, "the file exists 0600 before the recorder writes it")
        let pid = try recorderPID(dir)
        eventually("the recorder copies its samples") { (try? readFile(dir + "/rec.wav").count) == (try? readFile(dir + "/source.wav").count) }

        let path = try recording.finish()
        XCTAssertEqual(path, dir + "/rec.wav")
        XCTAssertEqual(kill(pid, 0), -1, "the recorder exited and was reaped")
        XCTAssertEqual(errno, ESRCH)
        XCTAssertEqual(fileMode(path), 0o600)
        XCTAssertEqual(try VoiceNote.encode(wav: path, to: dir + "/note.ogg"), 1.5, accuracy: 0.001)
        XCTAssertThrowsError(try recording.finish(), "only once")
    }

    func testCancelStopsTheRecorderAndRemovesTheFile() throws {
        let dir = try temporaryDirectory(self)
        let recording = try Recording(tool: try fakeRecorder(dir), path: dir + "/rec.wav")
        let pid = try recorderPID(dir)
        recording.cancel()
        XCTAssertEqual(kill(pid, 0), -1, "the recorder exited and was reaped")
        XCTAssertEqual(errno, ESRCH)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/rec.wav"))
        recording.cancel()   // twice: nothing
    }

    func testARecorderThatIgnoresSIGINTIsKilledAfterTheBoundAndTheRecordingFails() throws {
        let dir = try temporaryDirectory(self)
        let tool = try fakeRecorder(dir, body: """
            echo $$ > "\(dir)/pid"
            trap '' INT
            while :; do sleep 0.05; done
            """)
        let recording = try Recording(tool: tool, path: dir + "/rec.wav")
        let pid = try recorderPID(dir)
        let started = Date()
        XCTAssertThrowsError(try recording.finish()) { error in
            guard case .recorder(let executable, let cause) = (error as? MediaError)?.reason else { return XCTFail("\(error)") }
            XCTAssertEqual(executable, dir + "/bin/arecord")
            XCTAssertTrue(cause.contains("did not stop"), cause)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), Recording.stopTimeout + 3)
        XCTAssertEqual(kill(pid, 0), -1, "killed and reaped")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/rec.wav"))
    }

    func testARecorderThatFailsLeavesAnErrorWithItsStatusAndNoFile() throws {
        let dir = try temporaryDirectory(self)
        let tool = try fakeRecorder(dir, body: "echo $$ > \"\(dir)/pid\"; echo 'no microphone' >&2; exit 3")
        let recording = try Recording(tool: tool, path: dir + "/rec.wav")
        let pid = try recorderPID(dir)
        // Exited, not yet reaped: a zombie until the recording looks.
        eventually("the recorder exits") {
            ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: ")").last?.split(separator: " ").first) == "Z"
        }
        XCTAssertThrowsError(try recording.finish()) { error in
            guard case .recorder(_, let cause) = (error as? MediaError)?.reason else { return XCTFail("\(error)") }
            XCTAssertTrue(cause.contains("stopped by itself, exit status 3"), cause)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/rec.wav"))

        let missing = AudioTool(executable: dir + "/bin/nothing-here", arguments: [])
        XCTAssertThrowsError(try Recording(tool: missing, path: dir + "/other.wav")) {
            guard case .recorder = ($0 as? MediaError)?.reason else { return XCTFail("\($0)") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/other.wav"))
    }
}
