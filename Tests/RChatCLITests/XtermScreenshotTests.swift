import Foundation
import XCTest
import RChatCore
import RChatMedia
import RChatTUI

/// The real view in a real xterm under Xvfb (Tests/Scripts/xterm-screenshot.sh), in DejaVu
/// Sans Mono and in xterm's own misc-fixed, on white and on black: every status glyph of the
/// help legend (the cells a message line draws) is drawn, and none is the picture this font
/// makes of a character it lacks (taken in the same xterm from U+24E5 and U+23F1).
final class XtermScreenshotTests: XCTestCase {
    static let tools = ["Xvfb", "xterm", "tmux", "import", "xwininfo"]
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func onPath(_ tool: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }

    /// Which pixels of a cell are drawn: those unlike the cell's most common colour (its
    /// background, whatever the attributes), so a reversed cell compares with a plain one.
    static func mask(_ image: DecodedImage, x: Int, y: Int, width: Int, height: Int) -> [Bool] {
        var pixels: [UInt32] = []
        for row in y..<(y + height) {
            for column in x..<(x + width) {
                let i = (row * image.width + column) * 4
                pixels.append(UInt32(image.rgba[i]) << 16 | UInt32(image.rgba[i + 1]) << 8 | UInt32(image.rgba[i + 2]))
            }
        }
        var counts: [UInt32: Int] = [:]
        for p in pixels { counts[p, default: 0] += 1 }
        let background = counts.max { $0.value < $1.value }!.key
        func channels(_ p: UInt32) -> [Int] { [Int(p >> 16), Int((p >> 8) & 0xff), Int(p & 0xff)] }
        let bg = channels(background)
        return pixels.map { p in zip(channels(p), bg).contains { abs($0 - $1) > 80 } }
    }

    static func similarity(_ a: [Bool], _ b: [Bool]) -> Double {
        Double(zip(a, b).filter { $0 == $1 }.count) / Double(max(1, a.count))
    }

    func testStatusGlyphsAreDrawnInDejaVuAndMiscFixedNotAsMissingGlyphs() throws {
        for tool in Self.tools { try XCTSkipUnless(Self.onPath(tool), "\(tool) is not installed (make deps installs it)") }
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"),
                          "DejaVu Sans Mono is not installed (make deps installs fonts-dejavu-core)")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-xterm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }

        let script = Process()
        script.executableURL = Self.root.appendingPathComponent("Tests/Scripts/xterm-screenshot.sh")
        script.arguments = [out.path]
        var environment = ProcessInfo.processInfo.environment
        environment["RCHAT"] = Binaries.path("rchat")
        environment["TERMS"] = "xterm-256color"
        script.environment = environment
        // Files, not pipes: the tmux server the script starts keeps what it inherits open.
        let log = out.appendingPathComponent("script.log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        script.standardOutput = handle
        script.standardError = handle
        try script.run()
        let deadline = Date(timeIntervalSinceNow: 240)
        while script.isRunning && Date() < deadline { usleep(100_000) }
        if script.isRunning {
            script.terminate()   // the script's trap stops what it started
            script.waitUntilExit()
        }
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        XCTAssertEqual(script.terminationStatus, 0, said)

        for font in ["dejavu", "fixed"] {
            for background in ["white", "black"] {
                let name = out.appendingPathComponent("xterm-256color-\(font)-\(background)").path
                let legend = try Images.decode(path: name + "-legend.png")
                let tofu = try Images.decode(path: name + "-tofu.png")
                let geometry = try String(contentsOfFile: name + ".geometry", encoding: .utf8)
                    .split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
                XCTAssertEqual(geometry.count, 4, "\(font) \(background): \(geometry)")
                guard geometry.count == 4 else { continue }
                // xterm's internal border is 2 pixels; the window is 100×30 cells.
                let cellWidth = (geometry[0] - 4) / 100, cellHeight = (geometry[1] - 4) / 30
                func cell(_ image: DecodedImage, row: Int, column: Int) -> [Bool] {
                    Self.mask(image, x: geometry[2] + 2 + column * cellWidth, y: geometry[3] + 2 + row * cellHeight,
                              width: cellWidth, height: cellHeight)
                }
                // The two missing characters look alike and are not blank: the picture of a missing glyph.
                let missing = cell(tofu, row: 0, column: 0)
                XCTAssertTrue(missing.contains(true), "\(font) \(background): U+24E5 drew nothing")
                XCTAssertGreaterThan(Self.similarity(missing, cell(tofu, row: 0, column: 2)), 0.97,
                                     "\(font) \(background): U+24E5 and U+23F1 should both be missing")

                let lines = try String(contentsOfFile: name + "-legend.txt", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                guard let header = lines.firstIndex(where: { $0.contains("Statuses") }),
                      let start = lines[header].range(of: "Statuses") else { XCTFail("no legend: \(lines)"); continue }
                let column = lines[header].distance(from: lines[header].startIndex, to: start.lowerBound)
                for (n, status) in MessageStatus.allCases.enumerated() {
                    let row = header + 1 + n
                    XCTAssertTrue(lines[row].contains(status.rawValue), "\(lines[row])")
                    for (i, _) in Glyphs.unicode.status(status).text.enumerated() {
                        let drawn = cell(legend, row: row, column: column + i)
                        let where_ = "\(font) on \(background), \(status.rawValue), cell \(i)"
                        XCTAssertTrue(drawn.contains(true), "\(where_): nothing drawn")
                        XCTAssertLessThan(Self.similarity(drawn, missing), 0.97, "\(where_): drawn as a missing glyph")
                    }
                }
            }
        }
    }
}
