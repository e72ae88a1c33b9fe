import Foundation
import XCTest
import RChatCore
@testable import RChatTUI

/// Every character the view can draw outside ASCII is in every monospace font Debian
/// installs for terminals (`make deps`: fonts-dejavu-core, fonts-liberation2,
/// fonts-noto-mono, xfonts-base), as fontconfig reads their charsets: none draws as an empty
/// box. The characters come from the code itself: the glyph sets, and every non-ASCII
/// character in a string literal of the product's sources (so a new one is checked too).
final class FontCoverageTests: XCTestCase {
    static let fonts = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
        "/usr/share/fonts/truetype/liberation2/LiberationMono-Regular.ttf",
        "/usr/share/fonts/truetype/noto/NotoMono-Regular.ttf",
        // xterm's own fonts: `fixed` in a UTF-8 locale is 6x13's ISO 10646 version.
        "/usr/share/fonts/X11/misc/6x13.pcf.gz",
        "/usr/share/fonts/X11/misc/9x18.pcf.gz",
    ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The code points a font file has, as `fc-query --format '%{charset}'` lists them
    /// (hexadecimal ranges such as `20-7e a0-17f 2026`).
    static func charset(of font: String) throws -> Set<UInt32> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["fc-query", "--format", "%{charset}\n", font]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "fc-query", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "fc-query failed on \(font) (package fontconfig)"])
        }
        var points = Set<UInt32>()
        for range in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace) {
            let ends = range.split(separator: "-").compactMap { UInt32($0, radix: 16) }
            guard let low = ends.first, let high = ends.last, ends.count <= 2, low <= high else { continue }
            points.formUnion(low...high)
        }
        return points
    }

    /// The fonts' charsets; skips when one of the files is not installed.
    func installedCharsets() throws -> [(font: String, points: Set<UInt32>)] {
        let missing = Self.fonts.filter { !FileManager.default.fileExists(atPath: $0) }
        if !missing.isEmpty {
            throw XCTSkip("font files not installed: \(missing.joined(separator: ", ")) (make deps installs fonts-dejavu-core fonts-liberation2 fonts-noto-mono xfonts-base)")
        }
        return try Self.fonts.map { ($0, try Self.charset(of: $0)) }
    }

    /// Every non-ASCII character the glyph sets draw.
    static func glyphCharacters() -> [(Unicode.Scalar, String)] {
        var found: [(Unicode.Scalar, String)] = []
        for glyphs in [Glyphs.unicode, Glyphs.ascii] {
            let texts = MessageStatus.allCases.map { ($0.rawValue, glyphs.status($0).text) } + [
                ("vertical", glyphs.vertical), ("horizontal", glyphs.horizontal), ("topLeft", glyphs.topLeft),
                ("topRight", glyphs.topRight), ("bottomLeft", glyphs.bottomLeft), ("bottomRight", glyphs.bottomRight),
                ("ellipsis", glyphs.ellipsis), ("dash", glyphs.dash), ("selection", glyphs.selection),
                ("prompt", glyphs.prompt), ("separator", glyphs.separator), ("rowMark", glyphs.rowMark),
                ("recording", glyphs.recording), ("lineBreak", glyphs.lineBreak), ("timer", glyphs.timer),
                ("moreAbove", glyphs.moreAbove), ("moreBelow", glyphs.moreBelow), ("barDone", glyphs.barDone),
                ("barLeft", glyphs.barLeft),
            ]
            for (name, text) in texts {
                for scalar in text.unicodeScalars where !scalar.isASCII { found.append((scalar, "Glyphs.\(name)")) }
            }
        }
        return found
    }

    /// Every non-ASCII character in the string literals (and `\u{…}` escapes) of the view's
    /// sources, and in the string literals of the modules whose texts it shows (rows,
    /// errors, notices); not the tools that draw nothing (the benchmarks, the simulation, the
    /// fuzzer, whose literals are inputs). The other modules' escapes are TerminalText's stand-ins for what
    /// other people wrote: content, not the view's own.
    static func sourceCharacters() throws -> [(Unicode.Scalar, String)] {
        var found: [(Unicode.Scalar, String)] = []
        let sources = root.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path)
            .filter { !$0.hasPrefix("C") && !["rchat-bench", "rchat-simulate", "RChatSimulation", "rchat-fuzz"].contains($0) }
        XCTAssertTrue(modules.contains("RChatTUI"), "\(modules)")
        for module in modules {
            let folder = sources.appendingPathComponent(module)
            guard let walk = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let path as String in walk where path.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
                for (scalar, line, escaped) in SwiftLiterals.nonASCII(in: text) where !escaped || module == "RChatTUI" {
                    found.append((scalar, "\(module)/\(path):\(line)"))
                }
            }
        }
        return found
    }

    func testEveryCharacterTheViewDrawsIsInEveryTerminalFont() throws {
        let charsets = try installedCharsets()
        let drawn = try Self.sourceCharacters() + Self.glyphCharacters()
        XCTAssertTrue(drawn.contains { $0.1.contains("RChatTUI/") }, "the scan finds the view's own characters")
        var missing: [String] = []
        for (font, points) in charsets {
            XCTAssertTrue(points.isSuperset(of: 0x20...0x7E), "\(font): printable ASCII")
            var reported = Set<Unicode.Scalar>()
            for (scalar, source) in drawn where !points.contains(scalar.value) && reported.insert(scalar).inserted {
                missing.append("U+\(String(scalar.value, radix: 16, uppercase: true)) \(scalar) (\(source)) is not in \((font as NSString).lastPathComponent)")
            }
        }
        XCTAssertTrue(missing.isEmpty, missing.joined(separator: "\n"))
    }

    /// The scanner the test above relies on finds literals, escapes and interpolations, and
    /// leaves comments out.
    func testTheLiteralScannerFindsStringsNotComments() {
        let source = #"""
        // a comment with ⓥ
        /* a block ⏱ /* nested ▶ */ still ▲ */
        let a = "tick ✓" // trailing ◷
        let b = "\(x ? "in ●" : "out") after ░"
        let c = "escaped \u{24E5} and \\u{2400} and \""
        let d = """
            many █
            """
        let e = #"raw ▼"#
        """#
        let found = SwiftLiterals.nonASCII(in: source).map { "\($0.0)\($0.2 ? "e" : "")" }
        XCTAssertEqual(found, ["✓", "●", "░", "ⓥe", "█", "▼"])
    }
}

/// The non-ASCII characters in a Swift source's string literals, in order, with their line
/// and whether they were written as a `\u{…}` escape; comments are left out.
enum SwiftLiterals {
    static func nonASCII(in source: String) -> [(Unicode.Scalar, Int, Bool)] {
        var scanner = Scanner(Array(source.unicodeScalars))
        scanner.code(untilParen: false)
        return scanner.found
    }

    private struct Scanner {
        let s: [Unicode.Scalar]
        var i = 0
        var line = 1
        var found: [(Unicode.Scalar, Int, Bool)] = []

        init(_ s: [Unicode.Scalar]) { self.s = s }

        func at(_ text: String, _ offset: Int = 0) -> Bool {
            let t = Array(text.unicodeScalars)
            guard i + offset + t.count <= s.count else { return false }
            return Array(s[(i + offset)..<(i + offset + t.count)]) == t
        }

        mutating func step(_ n: Int = 1) {
            for _ in 0..<n where i < s.count {
                if s[i] == "\n" { line += 1 }
                i += 1
            }
        }

        /// Code, up to the `)` that closes an interpolation when `untilParen`.
        mutating func code(untilParen: Bool) {
            var depth = 0
            while i < s.count {
                if at("//") {
                    while i < s.count, s[i] != "\n" { step() }
                } else if at("/*") {
                    var nesting = 0
                    repeat {
                        if at("/*") { nesting += 1; step(2) } else if at("*/") { nesting -= 1; step(2) } else { step() }
                    } while nesting > 0 && i < s.count
                } else if s[i] == "#" || s[i] == "\"" {
                    var hashes = 0
                    while at("#", hashes) { hashes += 1 }
                    guard at("\"", hashes) else { step(max(1, hashes)); continue }
                    step(hashes)
                    let multi = at("\"\"\"")
                    step(multi ? 3 : 1)
                    string(close: (multi ? "\"\"\"" : "\"") + String(repeating: "#", count: hashes), hashes: hashes)
                } else {
                    if s[i] == "(" { depth += 1 }
                    if s[i] == ")" {
                        if untilParen && depth == 0 { step(); return }
                        depth -= 1
                    }
                    step()
                }
            }
        }

        mutating func string(close: String, hashes: Int) {
            let escape = "\\" + String(repeating: "#", count: hashes)
            while i < s.count {
                if at(close) { step(close.unicodeScalars.count); return }
                if at(escape) {
                    step(escape.unicodeScalars.count)
                    if at("(") {
                        step()
                        code(untilParen: true)
                    } else if at("u{"), let end = s[i...].firstIndex(of: "}") {
                        let hex = String(String.UnicodeScalarView(s[(i + 2)..<end]))
                        if let value = UInt32(hex, radix: 16), value > 0x7F, let scalar = Unicode.Scalar(value) {
                            found.append((scalar, line, true))
                        }
                        step(end + 1 - i)
                    } else {
                        step()
                    }
                    continue
                }
                if !s[i].isASCII { found.append((s[i], line, false)) }
                step()
            }
        }
    }
}
