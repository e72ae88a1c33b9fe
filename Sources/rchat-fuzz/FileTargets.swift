import Foundation
import RChatCore
import RChatCrypto
@testable import RChatEngine
@testable import RChatMedia

/// A file chunk from the peer: the body's layout against the file's size (the first 8 bytes
/// of the input), then the sealed chunk opened with the attachment's key as the receiver does.
enum AttachmentChunkTarget: FuzzTarget {
    static let name = "attachment-chunk"
    static let size: UInt64 = 3 * UInt64(FileStream.plainChunkBytes) / 2

    static func run(_ input: [UInt8]) {
        var r = ByteReader(input)
        let size = ((try? r.u64()) ?? 1) % (Attachment.maximumSize + 1)
        let body = r.rest()
        let count = FileStream.chunkCount(size: size)
        guard let index = ChunkBody.index(of: body), index < count else { return }
        guard case .success(let parts) = ChunkBody.parts(of: body, index: index, size: size) else { return }
        precondition(ChunkBody.encoded(index: index, streamHeader: parts.streamHeader ?? [], sealed: parts.sealed) == body)
        let header = parts.streamHeader ?? [UInt8](repeating: 0, count: FileStream.headerBytes)
        guard var decryptor = try? FileStream.Decryptor(key: Fixtures.secret(12), header: header) else { return }
        _ = parts.sealed.withUnsafeBytes { try? decryptor.open($0, final: index == count - 1) }
    }

    static func seeds() -> [[UInt8]] {
        var encryptor = FileStream.Encryptor(key: Fixtures.secret(12))
        let first = [UInt8](repeating: 1, count: FileStream.plainChunkBytes)
        let last = [UInt8](repeating: 2, count: Int(size) - FileStream.plainChunkBytes)
        let sealedFirst = first.withUnsafeBytes { encryptor.seal($0, final: false) }
        let sealedLast = last.withUnsafeBytes { encryptor.seal($0, final: true) }
        var sizeBytes = ByteWriter()
        sizeBytes.u64(size)
        var small = FileStream.Encryptor(key: Fixtures.secret(12))
        let sealedSmall = [UInt8]("tiny".utf8).withUnsafeBytes { small.seal($0, final: true) }
        var smallSize = ByteWriter()
        smallSize.u64(4)
        return [sizeBytes.bytes + ChunkBody.encoded(index: 0, streamHeader: encryptor.header, sealed: sealedFirst),
                sizeBytes.bytes + ChunkBody.encoded(index: 1, streamHeader: [], sealed: sealedLast),
                smallSize.bytes + ChunkBody.encoded(index: 0, streamHeader: small.header, sealed: sealedSmall)]
    }
}

/// A scratch file per process: the media decoders read paths, as a received file is read.
enum ScratchFile {
    static let directory: String = {
        let path = NSTemporaryDirectory() + "rchat-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    static func write(_ bytes: [UInt8], as name: String) -> String {
        let path = directory + "/" + name
        precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "cannot write \(path)")
        return path
    }
}

/// A received photo through the media decoders (libjpeg-turbo, libpng): the format sniffed,
/// the header probed, the pixels decoded and turned, each within the pixel limit (here a
/// smaller one, so that each run stays quick).
enum ImageTarget: FuzzTarget {
    static let name = "image"
    static let maximumPixels = 1 << 20

    static func run(_ input: [UInt8]) {
        let path = ScratchFile.write(input, as: "image")
        _ = Images.format(ofFileAt: path)
        guard let probed = try? Images.probe(path: path), probed.width * probed.height <= maximumPixels,
              let image = try? Images.decode(path: path, maximumPixels: maximumPixels) else { return }
        precondition(image.rgba.count == image.width * image.height * 4, "decoded pixels do not fill the image")
    }

    static func seeds() -> [[UInt8]] {
        // Made by ImageMagick once and kept (Fuzz/Corpus/image/): the encoders are not ours.
        []
    }
}

/// A received voice note: the Ogg page structure, the OpusHead, the duration libopusfile
/// reads, and the decoding to WAV that playing it does.
enum OggOpusTarget: FuzzTarget {
    static let name = "ogg-opus"

    static func run(_ input: [UInt8]) {
        let path = ScratchFile.write(input, as: "voice.ogg")
        guard VoiceNote.isOggOpus(path: path) else { return }
        _ = try? OggPages.checkComplete(path)
        _ = try? VoiceNote.duration(ofOggOpus: path)
        _ = try? VoiceNote.decode(ogg: path, toWav: ScratchFile.directory + "/voice.wav")
    }

    static func seeds() -> [[UInt8]] {
        // A short tone encoded by the real encoder (libopusenc through VoiceNote.encode).
        let wav = ScratchFile.directory + "/tone.wav", ogg = ScratchFile.directory + "/tone.ogg"
        guard FileManager.default.createFile(atPath: wav, contents: Data(toneWAV())), (try? VoiceNote.encode(wav: wav, to: ogg)) != nil, let bytes = FileManager.default.contents(atPath: ogg) else { return [] }
        return [Array(bytes)]
    }

    /// 0.2 s of a 440 Hz tone, 16-bit mono at 48 kHz.
    static func toneWAV() -> [UInt8] {
        let rate = 48_000, samples = rate / 5
        var data: [UInt8] = []
        for i in 0..<samples {
            let v = Int16(8000 * sin(2 * Double.pi * 440 * Double(i) / Double(rate)))
            data += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)]
        }
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        func le16(_ v: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        return Array("RIFF".utf8) + le32(36 + data.count) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1)
            + le32(rate) + le32(rate * 2) + le16(2) + le16(16) + Array("data".utf8) + le32(data.count) + data
    }
}
