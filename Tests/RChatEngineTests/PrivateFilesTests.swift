import Foundation
import XCTest
@testable import RChatEngine

/// Secret files are created, never written through a link someone planted: not at the
/// target, not at the temporary name.
final class PrivateFilesTests: XCTestCase {
    var dir = ""
    var victim = ""
    let victimBytes = Data("the victim's own content\n".utf8)

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-private-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        victim = "\(dir)/victim"
        try victimBytes.write(to: URL(fileURLWithPath: victim))
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func destination(_ path: String) -> String? { try? FileManager.default.destinationOfSymbolicLink(atPath: path) }
    func entries() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []) }

    func testASymlinkAtTheTemporaryNameIsNeverOpened() throws {
        var names = ["planted.tmp", "fresh.tmp"].makeIterator()
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/planted.tmp", withDestinationPath: victim)
        try PrivateFiles.write(Array("secret".utf8), to: "\(dir)/export", temporaryName: { names.next()! })

        XCTAssertEqual(FileManager.default.contents(atPath: victim), victimBytes, "written through the planted link")
        XCTAssertEqual(FileManager.default.contents(atPath: "\(dir)/export"), Data("secret".utf8))
        XCTAssertEqual(PrivateFiles.mode("\(dir)/export"), 0o600)
        XCTAssertEqual(destination("\(dir)/planted.tmp"), victim, "the planted link is left as it was")
        XCTAssertEqual(entries(), ["victim", "planted.tmp", "export"], "no temporary file left behind")
    }

    func testEveryTemporaryNameTakenWritesNothing() throws {
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/planted.tmp", withDestinationPath: victim)
        XCTAssertThrowsError(try PrivateFiles.write(Array("secret".utf8), to: "\(dir)/export", temporaryName: { "planted.tmp" }))
        XCTAssertEqual(FileManager.default.contents(atPath: victim), victimBytes)
        XCTAssertEqual(entries(), ["victim", "planted.tmp"])
    }

    func testASymlinkAtTheTargetIsRefusedDanglingOrNot() throws {
        let dangling = "\(dir)/not-yet"
        for (link, target) in [("to-victim", victim), ("dangling", dangling)] {
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/\(link)", withDestinationPath: target)
            XCTAssertThrowsError(try PrivateFiles.write(Array("secret".utf8), to: "\(dir)/\(link)")) {
                XCTAssertTrue("\($0)".contains("already exists"), "\($0)")
            }
            XCTAssertEqual(destination("\(dir)/\(link)"), target, "the link itself is not replaced either")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: victim), victimBytes)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dangling), "nothing created where the dangling link points")
        XCTAssertEqual(entries(), ["victim", "to-victim", "dangling"], "no temporary file left behind")
    }
}
