import Glibc

/// The page structure of an Ogg file, checked without decoding: libopusfile plays what it
/// can of a cut file, so completeness is checked here.
///
/// Page layout: `"OggS"` · u8 version 0 · u8 flags (0x02 first page, 0x04 last page) ·
/// i64 granule position · u32 serial · u32 sequence · u32 CRC · u8 segment count n ·
/// n lacing bytes (the body is their sum) · body. A packet ends at the first lacing byte
/// below 255.
enum OggPages {
    static let headerSize = 27
    static let beginningOfStream: UInt8 = 0x02
    static let endOfStream: UInt8 = 0x04

    /// The first page opens a stream whose first packet is an OpusHead (19 bytes at least).
    static func startsWithOpusHead(_ path: String) -> Bool {
        guard let head = try? FileBytes.prefix(of: path, count: headerSize + 255 + 8),
              head.count >= headerSize, head[0..<4].elementsEqual("OggS".utf8), head[4] == 0,
              head[5] & beginningOfStream != 0 else { return false }
        let segments = Int(head[26])
        let bodyStart = headerSize + segments
        guard segments > 0, head.count >= bodyStart + 8, head[bodyStart..<bodyStart + 8].elementsEqual("OpusHead".utf8) else { return false }
        var firstPacket = 0
        for lacing in head[headerSize..<bodyStart] {
            firstPacket += Int(lacing)
            if lacing < 255 { break }
        }
        return firstPacket >= 19
    }

    /// Every page whole, the file ending where its last page ends, and that page marked last:
    /// a file cut anywhere fails one of these.
    static func checkComplete(_ path: String) throws(MediaError) {
        guard startsWithOpusHead(path) else { throw MediaError(.notOggOpus(path: path, cause: "no OpusHead on the first page")) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError(.file(action: "open", path: path, errno: errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw MediaError(.file(action: "read", path: path, errno: errno)) }
        let fileSize = Int(info.st_size)
        var offset = 0
        var lastFlags: UInt8 = 0
        while offset < fileSize {
            guard lseek(fd, off_t(offset), SEEK_SET) >= 0 else { throw MediaError(.file(action: "read", path: path, errno: errno)) }
            let header = try FileBytes.read(fd, count: headerSize, path: path)
            guard header.count == headerSize else { throw MediaError(.notOggOpus(path: path, cause: "cut inside a page header")) }
            guard header[0..<4].elementsEqual("OggS".utf8) else {
                throw MediaError(.notOggOpus(path: path, cause: "no page at byte \(offset)"))
            }
            let lacing = try FileBytes.read(fd, count: Int(header[26]), path: path)
            guard lacing.count == Int(header[26]) else { throw MediaError(.notOggOpus(path: path, cause: "cut inside a page header")) }
            let end = offset + headerSize + lacing.count + lacing.reduce(0) { $0 + Int($1) }
            guard end <= fileSize else { throw MediaError(.notOggOpus(path: path, cause: "cut inside a page")) }
            lastFlags = header[5]
            offset = end
        }
        guard lastFlags & endOfStream != 0 else { throw MediaError(.notOggOpus(path: path, cause: "cut after a page, before the last one")) }
    }
}
