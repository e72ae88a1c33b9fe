import Foundation
import RChatCore
@testable import RChatMedia
import XCTest

final class ImagesTests: XCTestCase {
    /// 64×48: red rising left to right, green top to bottom, blue 77, alpha 255 except one
    /// half-transparent pixel.
    static func gradient(width: Int = 64, height: Int = 48) -> [UInt8] {
        var rgba: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                rgba += [UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), 77, x == 5 && y == 7 ? 128 : 255]
            }
        }
        return rgba
    }

    /// 80×60 RGB: red on the left half, blue on the right.
    static func halves(width: Int = 80, height: Int = 60) -> [UInt8] {
        var rgb: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width { rgb += x < width / 2 ? [220, 30, 30] : [30, 30, 220] }
        }
        return rgb
    }

    /// The format by magic bytes, the header's size and the decoded size all agree.
    private func probeAndDecode(_ path: String, _ format: ImageFormat, width: Int, height: Int,
                                file: StaticString = #filePath, line: UInt = #line) throws -> DecodedImage {
        XCTAssertEqual(Images.format(ofFileAt: path), format, file: file, line: line)
        let probed = try Images.probe(path: path)
        XCTAssertEqual(probed.format, format, file: file, line: line)
        XCTAssertEqual(probed.width, width, file: file, line: line)
        XCTAssertEqual(probed.height, height, file: file, line: line)
        let image = try Images.decode(path: path)
        XCTAssertEqual(image.width, width, file: file, line: line)
        XCTAssertEqual(image.height, height, file: file, line: line)
        XCTAssertEqual(image.rgba.count, width * height * 4, file: file, line: line)
        return image
    }

    func pixel(_ image: DecodedImage, _ x: Int, _ y: Int) -> [UInt8] {
        let at = (y * image.width + x) * 4
        return Array(image.rgba[at..<at + 4])
    }

    func testAPNGFromLibpngDecodesToItsPixels() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/picture.png"
        let rgba = Self.gradient()
        try writePNG(path, width: 64, height: 48, rgba: rgba)

        let image = try probeAndDecode(path, .png, width: 64, height: 48)
        XCTAssertEqual(image.rgba, rgba, "PNG is lossless: every pixel comes back")
        XCTAssertEqual(pixel(image, 63, 0), [255, 0, 77, 255])
        XCTAssertEqual(pixel(image, 5, 7)[3], 128, "alpha is kept")
    }

    func testAJPEGFromLibjpegDecodesToItsSizeAndColours() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/photo.jpg"
        try writeJPEG(path, width: 80, height: 60, rgb: Self.halves())

        let image = try probeAndDecode(path, .jpeg, width: 80, height: 60)
        // Lossy, so near: well inside each half.
        for (x, expected) in [(10, [220, 30, 30]), (70, [30, 30, 220])] {
            let got = pixel(image, x, 30)
            for channel in 0..<3 {
                XCTAssertLessThan(abs(Int(got[channel]) - expected[channel]), 12, "pixel (\(x), 30) is \(got)")
            }
            XCTAssertEqual(got[3], 255)
        }
    }

    /// 80×60 in quadrants, written with each EXIF orientation: decoded upright, sides swapped
    /// for the quarter turns, by probe too.
    func testAJPEGIsTurnedUprightByItsEXIFOrientation() throws {
        let dir = try temporaryDirectory(self)
        let (red, green, blue, white): ([UInt8], [UInt8], [UInt8], [UInt8]) = ([230, 20, 20], [20, 230, 20], [20, 20, 230], [240, 240, 240])
        var rgb: [UInt8] = []
        for y in 0..<60 { for x in 0..<80 { rgb += y < 30 ? (x < 40 ? red : green) : (x < 40 ? blue : white) } }
        // Stored: red top-left, green top-right, blue bottom-left, white bottom-right. Shown:
        let expected: [Int32: (topLeft: [UInt8], topRight: [UInt8], bottomLeft: [UInt8])] = [
            1: (red, green, blue), 2: (green, red, white), 3: (white, blue, green), 4: (blue, white, red),
            5: (red, blue, green), 6: (blue, red, white), 7: (white, green, blue), 8: (green, white, red),
        ]
        for (orientation, corners) in expected.sorted(by: { $0.key < $1.key }) {
            let path = "\(dir)/o\(orientation).jpg"
            try writeJPEG(path, width: 80, height: 60, rgb: rgb, orientation: orientation)
            let (width, height) = orientation >= 5 ? (60, 80) : (80, 60)
            let image = try probeAndDecode(path, .jpeg, width: width, height: height)
            for (name, x, y, colour) in [("top left", width / 4, height / 4, corners.topLeft), ("top right", width * 3 / 4, height / 4, corners.topRight),
                                         ("bottom left", width / 4, height * 3 / 4, corners.bottomLeft)] {
                let got = pixel(image, x, y)
                XCTAssertTrue((0..<3).allSatisfy { abs(Int(got[$0]) - Int(colour[$0])) < 24 }, "orientation \(orientation), \(name): \(got), expected \(colour)")
            }
        }
    }

    /// 190 scans decode; 568 (each a pass over every coefficient) are refused as the CPU bomb
    /// they can be, with libjpeg's scan count kept in the cause.
    func testAProgressiveJPEGOfTooManyScansIsRefused() throws {
        let dir = try temporaryDirectory(self)
        try writeJPEG(dir + "/progressive.jpg", width: 80, height: 60, rgb: Self.halves(), scansPerBand: 1)
        let image = try probeAndDecode(dir + "/progressive.jpg", .jpeg, width: 80, height: 60)
        XCTAssertLessThan(abs(Int(pixel(image, 10, 30)[0]) - 220), 12)

        try writeJPEG(dir + "/scans.jpg", width: 80, height: 60, rgb: Self.halves(), scansPerBand: 3)
        XCTAssertEqual(try Images.probe(path: dir + "/scans.jpg").width, 80, "the header alone is fine")
        XCTAssertThrowsError(try Images.decode(path: dir + "/scans.jpg")) { error in
            guard case .damagedImage(.jpeg, _, let cause) = (error as? MediaError)?.reason else { return XCTFail("\(error)") }
            XCTAssertEqual(cause, "more than 500 progressive scans")
        }
    }

    func testFormatIsByMagicBytesOnly() throws {
        let dir = try temporaryDirectory(self)
        try writePNG(dir + "/a.jpg", width: 2, height: 2, rgba: [UInt8](repeating: 200, count: 16))
        try writeJPEG(dir + "/b.png", width: 2, height: 2, rgb: [UInt8](repeating: 200, count: 12))
        try writeFile(dir + "/text.png", Array("just some words\n".utf8))
        try writeFile(dir + "/empty.jpg", [])
        try writeFile(dir + "/random", (0..<4096).map { _ in UInt8.random(in: 0...255) })
        try writeFile(dir + "/short", [0x89, 0x50, 0x4E])

        XCTAssertEqual(Images.format(ofFileAt: dir + "/a.jpg"), .png, "the name does not count")
        XCTAssertEqual(Images.format(ofFileAt: dir + "/b.png"), .jpeg)
        XCTAssertNil(Images.format(ofFileAt: dir + "/text.png"))
        XCTAssertNil(Images.format(ofFileAt: dir + "/empty.jpg"))
        XCTAssertNil(Images.format(ofFileAt: dir + "/short"))
        XCTAssertNil(Images.format(ofFileAt: dir + "/missing"))
    }

    /// A valid PNG whose IHDR (and its CRC) is rewritten to claim 60000×60000: 14.4 GB of RGBA.
    func testAPNGClaimingSixtyThousandSquaredIsRefusedBeforeAllocating() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/bomb.png"
        try writePNG(path, width: 4, height: 4, rgba: [UInt8](repeating: 90, count: 64))
        var bytes = try readFile(path)
        XCTAssertEqual(Array(bytes[12..<16]), Array("IHDR".utf8))
        let side = withUnsafeBytes(of: UInt32(60_000).bigEndian, Array.init)
        bytes.replaceSubrange(16..<20, with: side)
        bytes.replaceSubrange(20..<24, with: side)
        bytes.replaceSubrange(29..<33, with: withUnsafeBytes(of: CRC32.checksum(Array(bytes[12..<29])).bigEndian, Array.init))
        try writeFile(path, bytes)

        try assertRefusedAsTooLarge(path)
    }

    /// A valid JPEG whose start-of-frame is rewritten to claim 60000×60000.
    func testAJPEGClaimingSixtyThousandSquaredIsRefusedBeforeAllocating() throws {
        let dir = try temporaryDirectory(self)
        let path = dir + "/bomb.jpg"
        try writeJPEG(path, width: 8, height: 8, rgb: [UInt8](repeating: 90, count: 192))
        var bytes = try readFile(path)
        let sof = try XCTUnwrap((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }, "a baseline frame header")
        let side = withUnsafeBytes(of: UInt16(60_000).bigEndian, Array.init)
        bytes.replaceSubrange(sof + 5..<sof + 7, with: side)
        bytes.replaceSubrange(sof + 7..<sof + 9, with: side)
        try writeFile(path, bytes)

        try assertRefusedAsTooLarge(path)
    }

    private func assertRefusedAsTooLarge(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = peakResidentBytes()
        let tooLarge = MediaError(.tooLarge(width: 60_000, height: 60_000, limit: Images.maximumPixels))
        XCTAssertThrowsError(try Images.probe(path: path), file: file, line: line) { XCTAssertEqual($0 as? MediaError, tooLarge, file: file, line: line) }
        XCTAssertThrowsError(try Images.decode(path: path), file: file, line: line) { XCTAssertEqual($0 as? MediaError, tooLarge, file: file, line: line) }
        XCTAssertLessThan(peakResidentBytes() - before, 64 << 20, "nothing near 14 GB was touched", file: file, line: line)
        XCTAssertEqual(tooLarge.description.split(separator: "\n").count, 1)
    }

    func testALimitBelowThePictureRefusesIt() throws {
        let dir = try temporaryDirectory(self)
        try writePNG(dir + "/p.png", width: 64, height: 48, rgba: Self.gradient())
        XCTAssertThrowsError(try Images.decode(path: dir + "/p.png", maximumPixels: 64 * 48 - 1)) {
            XCTAssertEqual($0 as? MediaError, MediaError(.tooLarge(width: 64, height: 48, limit: 64 * 48 - 1)))
        }
        XCTAssertEqual(try Images.decode(path: dir + "/p.png", maximumPixels: 64 * 48).width, 64)
    }

    func testTruncatedCorruptRandomAndEmptyFilesAreErrorsNotCrashes() throws {
        let dir = try temporaryDirectory(self)
        try writePNG(dir + "/whole.png", width: 64, height: 48, rgba: Self.gradient())
        try writeJPEG(dir + "/whole.jpg", width: 80, height: 60, rgb: Self.halves())
        let png = try readFile(dir + "/whole.png"), jpeg = try readFile(dir + "/whole.jpg")
        try writeFile(dir + "/cut.png", Array(png.prefix(png.count / 2)))
        try writeFile(dir + "/cut.jpg", Array(jpeg.prefix(jpeg.count / 2)))
        var flipped = png
        flipped[png.count / 2] ^= 0xFF   // inside IDAT: its CRC no longer matches
        try writeFile(dir + "/flipped.png", flipped)
        try writeFile(dir + "/noise.png", Images.pngSignature + (0..<2048).map { _ in UInt8.random(in: 0...255) })
        try writeFile(dir + "/noise.jpg", [0xFF, 0xD8, 0xFF] + (0..<2048).map { _ in UInt8.random(in: 0...255) })
        try writeFile(dir + "/random", (0..<2048).map { _ in UInt8.random(in: 0...0x7F) })   // never 0x89 nor 0xFF: no signature
        try writeFile(dir + "/empty", [])

        for name in ["cut.png", "cut.jpg", "flipped.png", "noise.png", "noise.jpg"] {
            XCTAssertThrowsError(try Images.decode(path: "\(dir)/\(name)"), name) { error in
                guard case .damagedImage(_, let path, let cause) = (error as? MediaError)?.reason else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual(path, "\(dir)/\(name)")
                XCTAssertFalse(cause.isEmpty, "\(name): the decoder's words are kept")
                XCTAssertEqual("\(error)".split(separator: "\n").count, 1)
            }
        }
        for name in ["random", "empty"] {
            XCTAssertThrowsError(try Images.probe(path: "\(dir)/\(name)"), name) {
                XCTAssertEqual($0 as? MediaError, MediaError(.notAnImage(path: "\(dir)/\(name)")))
            }
            XCTAssertThrowsError(try Images.decode(path: "\(dir)/\(name)"), name)
        }
        XCTAssertThrowsError(try Images.decode(path: dir + "/missing.png")) {
            XCTAssertEqual($0 as? MediaError, MediaError(.file(action: "open", path: dir + "/missing.png", errno: ENOENT)))
        }
    }

    /// Bytes changed all over valid pictures, some cut short (the same 300 files each run):
    /// every one decodes to a picture within the limit or is refused with one line.
    func testMutatedPicturesDecodeOrAreRefusedNeverCrash() throws {
        let dir = try temporaryDirectory(self)
        try writePNG(dir + "/whole.png", width: 64, height: 48, rgba: Self.gradient())
        try writeJPEG(dir + "/whole.jpg", width: 80, height: 60, rgb: Self.halves())
        var decoded = 0, damaged = 0, other = 0
        var wrong: [String] = []
        for name in ["whole.png", "whole.jpg"] {
            let whole = try readFile("\(dir)/\(name)")
            for round in 0..<300 {
                var bytes = whole
                // Positions and values spread by Knuth's multiplicative hash.
                for change in 0...(round % 4) {
                    let spread = UInt64(round * 4 + change + 1) &* 2_654_435_761
                    bytes[Int(spread % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: spread >> 13)
                }
                if round % 5 == 0 { bytes.removeLast(Int(UInt64(round + 1) &* 2_654_435_761 % UInt64(bytes.count / 2))) }
                let path = "\(dir)/mutated-\(name)"
                try writeFile(path, bytes)
                do {
                    let image = try Images.decode(path: path)
                    if image.width * image.height > Images.maximumPixels || image.rgba.count != image.width * image.height * 4 {
                        wrong.append("\(name) #\(round): \(image.width)×\(image.height), \(image.rgba.count) bytes")
                    }
                    decoded += 1
                } catch {
                    if case .damagedImage = error.reason { damaged += 1 } else { other += 1 }
                    if error.description.contains("\n") { wrong.append("\(name) #\(round): \(error.description)") }
                }
            }
        }
        XCTAssertEqual(wrong, [])
        XCTAssertEqual(decoded + damaged + other, 600)
        XCTAssertGreaterThan(damaged, 300, "decoded \(decoded), damaged \(damaged), other \(other)")
    }
}
