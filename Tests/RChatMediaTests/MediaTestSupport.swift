import CJPEG
import CPNG
import Foundation
@testable import RChatMedia
import XCTest

/// A fresh 0700 directory for one test, removed by the test's teardown.
func temporaryDirectory(_ test: XCTestCase) throws -> String {
    var template = Array((NSTemporaryDirectory() + "/rchat-media-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    let path = String(cString: made)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return path
}

func writeFile(_ path: String, _ bytes: [UInt8], mode: Int = 0o600) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    chmod(path, mode_t(mode))
}

func readFile(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

func fileMode(_ path: String) -> mode_t {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
}

/// A PNG written by libpng's own encoder (its simplified API) from RGBA pixels.
func writePNG(_ path: String, width: Int, height: Int, rgba: [UInt8]) throws {
    var image = png_image()
    image.version = UInt32(PNG_IMAGE_VERSION)
    image.width = UInt32(width)
    image.height = UInt32(height)
    image.format = rchat_png_format_rgba()
    let ok = rgba.withUnsafeBytes { png_image_write_to_file(&image, path, 0, $0.baseAddress, Int32(width * 4), nil) }
    let message = withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    png_image_free(&image)
    XCTAssertNotEqual(ok, 0, "libpng could not write the test picture: \(message)")
}

/// A JPEG written by libjpeg's own encoder from RGB pixels, with an EXIF Orientation when 1–8,
/// progressive with 1 + 189 × `scansPerBand` scans when that is 1–14.
func writeJPEG(_ path: String, width: Int, height: Int, rgb: [UInt8], quality: Int32 = 95, orientation: Int32 = 0,
               scansPerBand: Int32 = 0) throws {
    var message = [CChar](repeating: 0, count: 256)
    let status = rchat_jpeg_write_rgb(path, rgb, Int32(width), Int32(height), quality, orientation, scansPerBand, &message, message.count)
    XCTAssertEqual(status, 0, "libjpeg could not write the test picture: \(MediaError.text(message))")
}

/// A 16-bit PCM WAV of a sine tone (the same tone on every channel).
func writeSineWAV(_ path: String, seconds: Double, frequency: Double = 440, rate: Int = 48_000, channels: Int = 1) throws {
    let frames = Int(seconds * Double(rate))
    var bytes = WAV.header(channels: channels, sampleRate: rate, frames: frames)
    bytes.reserveCapacity(bytes.count + frames * channels * 2)
    for i in 0..<frames {
        let sample = Int16(12_000 * sin(2 * Double.pi * frequency * Double(i) / Double(rate)))
        for _ in 0..<channels { bytes += withUnsafeBytes(of: sample.littleEndian, Array.init) }
    }
    try writeFile(path, bytes)
}

/// The samples of a 16-bit WAV this code wrote (44-byte header), with its channels and rate.
func readWAV(_ path: String) throws -> (channels: Int, rate: Int, samples: [Int16]) {
    let bytes = try readFile(path)
    XCTAssertGreaterThanOrEqual(bytes.count, 44)
    XCTAssertEqual(Array(bytes[0..<4]), Array("RIFF".utf8))
    XCTAssertEqual(Array(bytes[36..<40]), Array("data".utf8))
    let channels = Int(bytes[22]) | Int(bytes[23]) << 8
    let rate = Int(bytes[24]) | Int(bytes[25]) << 8 | Int(bytes[26]) << 16 | Int(bytes[27]) << 24
    let declared = Int(bytes[40]) | Int(bytes[41]) << 8 | Int(bytes[42]) << 16 | Int(bytes[43]) << 24
    XCTAssertEqual(declared, bytes.count - 44, "the header's data size is the samples written")
    let samples = stride(from: 44, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    return (channels, rate, samples)
}

/// Polls `condition` until it holds or `timeout` seconds pass.
func eventually(_ what: String, timeout: Double = 10, _ condition: () -> Bool) {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline { XCTFail("timed out waiting for \(what)"); return }
        usleep(10_000)
    }
}

/// The peak resident set of this process so far, in bytes.
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}
