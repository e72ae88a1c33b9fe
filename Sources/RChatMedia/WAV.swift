import Glibc

/// 16-bit PCM WAV, the recorders' output and the players' input.
///
/// Layout written (RIFF, little-endian, 44 bytes before the samples):
/// `"RIFF"` u32 size-8 · `"WAVE"` · `"fmt "` u32 16 · u16 format 1 (PCM) · u16 channels ·
/// u32 rate · u32 bytes per second · u16 bytes per frame · u16 bits 16 · `"data"` u32 data size ·
/// samples, interleaved, signed 16-bit little-endian.
/// Read: the same, also WAVE_FORMAT_EXTENSIBLE with the PCM subformat, other chunks skipped.
struct WAV: Equatable {
    let channels: Int
    let sampleRate: Int
    /// Where the samples start, and how many whole frames the file holds.
    let dataOffset: Int
    let frames: Int

    static let headerSize = 44
    static let rates = 8_000...48_000

    /// The 44-byte header for `frames` frames.
    static func header(channels: Int, sampleRate: Int, frames: Int) -> [UInt8] {
        let dataBytes = UInt32(clamping: frames * channels * 2)
        var bytes: [UInt8] = []
        func text(_ s: String) { bytes += Array(s.utf8) }
        func u16(_ v: Int) { bytes += withUnsafeBytes(of: UInt16(v).littleEndian, Array.init) }
        func u32(_ v: UInt32) { bytes += withUnsafeBytes(of: v.littleEndian, Array.init) }
        text("RIFF"); u32(dataBytes &+ 36); text("WAVE")
        text("fmt "); u32(16); u16(1); u16(channels); u32(UInt32(sampleRate)); u32(UInt32(sampleRate * channels * 2))
        u16(channels * 2); u16(16)
        text("data"); u32(dataBytes)
        return bytes
    }

    /// The format and where the samples are; a WAV this code cannot encode is an error saying why.
    /// A data size larger than the file (a recorder stopped before it wrote the final size) or
    /// zero counts what the file holds.
    static func read(_ fd: Int32, path: String) throws(MediaError) -> WAV {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw MediaError(.file(action: "read", path: path, errno: errno)) }
        let fileSize = Int(info.st_size)
        let riff = try FileBytes.read(fd, count: 12, path: path)
        guard riff.count == 12, riff[0..<4].elementsEqual("RIFF".utf8), riff[8..<12].elementsEqual("WAVE".utf8) else {
            throw MediaError(.unsupportedWAV(path: path, cause: "not a RIFF WAVE file"))
        }
        var offset = 12
        var format: (channels: Int, rate: Int)?
        // Bounded: a file of nothing but tiny chunks is refused, not walked for ever.
        for _ in 0..<64 {
            guard lseek(fd, off_t(offset), SEEK_SET) >= 0 else { throw MediaError(.file(action: "read", path: path, errno: errno)) }
            let chunk = try FileBytes.read(fd, count: 8, path: path)
            guard chunk.count == 8 else { break }
            let size = Int(littleEndian32(chunk, 4))
            let body = offset + 8
            if chunk[0..<4].elementsEqual("fmt ".utf8) {
                format = try parseFormat(try FileBytes.read(fd, count: min(size, 40), path: path), path: path)
            } else if chunk[0..<4].elementsEqual("data".utf8) {
                guard let format else { throw MediaError(.unsupportedWAV(path: path, cause: "samples before the format")) }
                let available = max(0, fileSize - body)
                let bytes = size == 0 || size > available ? available : size
                let frames = bytes / (format.channels * 2)
                guard frames > 0 else { throw MediaError(.unsupportedWAV(path: path, cause: "no samples")) }
                return WAV(channels: format.channels, sampleRate: format.rate, dataOffset: body, frames: frames)
            }
            offset = body + size + (size & 1)
        }
        throw MediaError(.unsupportedWAV(path: path, cause: "no samples"))
    }

    private static func parseFormat(_ fmt: [UInt8], path: String) throws(MediaError) -> (channels: Int, rate: Int) {
        guard fmt.count >= 16 else { throw MediaError(.unsupportedWAV(path: path, cause: "format chunk too short")) }
        var tag = Int(littleEndian16(fmt, 0))
        if tag == 0xFFFE, fmt.count >= 26 { tag = Int(littleEndian16(fmt, 24)) }
        let channels = Int(littleEndian16(fmt, 2)), rate = Int(littleEndian32(fmt, 4)), bits = Int(littleEndian16(fmt, 14))
        guard tag == 1, bits == 16 else {
            throw MediaError(.unsupportedWAV(path: path, cause: "format \(tag), \(bits)-bit"))
        }
        guard (1...2).contains(channels), rates.contains(rate) else {
            throw MediaError(.unsupportedWAV(path: path, cause: "\(channels) channels at \(rate) Hz"))
        }
        return (channels, rate)
    }

    private static func littleEndian16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    private static func littleEndian32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }
}
