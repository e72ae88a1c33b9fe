import COpus
import Glibc

/// Voice notes: Ogg Opus written by libopusenc and read by libopusfile, from and to the 16-bit
/// WAV the system's recorders and players speak.
public enum VoiceNote {
    /// Speech at 24 kbit/s: a minute is about 180 KB.
    static let bitrate: Int32 = 24_000
    /// Opus always decodes at 48 kHz.
    static let decodedRate = 48_000
    /// Frames per read or write.
    static let block = 4_800

    /// 'OggS' page whose first packet is 'OpusHead'.
    public static func isOggOpus(path: String) -> Bool { OggPages.startsWithOpusHead(path) }

    /// Encodes a 16-bit PCM WAV (mono or stereo, 8–48 kHz) to Ogg Opus with libopusenc into a new
    /// 0600 file; returns the duration in seconds. On failure nothing is left at `ogg`.
    public static func encode(wav: String, to ogg: String) throws(MediaError) -> Double {
        let input = open(wav, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw MediaError(.file(action: "open", path: wav, errno: errno)) }
        defer { close(input) }
        let format = try WAV.read(input, path: wav)
        let output = try FileBytes.create(ogg)
        do throws(MediaError) {
            try encode(input, format, wav: wav, into: output, ogg: ogg)
            guard fsync(output) == 0 else { throw MediaError(.file(action: "write", path: ogg, errno: errno)) }
            close(output)
        } catch {
            close(output)
            unlink(ogg)
            throw error
        }
        return Double(format.frames) / Double(format.sampleRate)
    }

    private static func encode(_ input: Int32, _ format: WAV, wav: String, into output: Int32, ogg: String) throws(MediaError) {
        var status: Int32 = 0
        let comments = ope_comments_create()
        defer { ope_comments_destroy(comments) }
        let sink = OggSink(fd: output)
        var callbacks = OpusEncCallbacks(write: { user, bytes, count in
            let sink = Unmanaged<OggSink>.fromOpaque(user!).takeUnretainedValue()
            do throws(MediaError) {
                try FileBytes.write(sink.fd, UnsafeRawBufferPointer(start: bytes, count: Int(count)), path: "")
                return 0
            } catch {
                if case .file(_, _, let code) = error.reason { sink.failure = code }
                return 1
            }
        }, close: { _ in 0 })
        // A failed write is reported with its errno, not as the encoder's "write error".
        func failure(_ status: Int32) -> MediaError {
            if sink.failure != 0 { return MediaError(.file(action: "write", path: ogg, errno: sink.failure)) }
            return MediaError(.codec(path: ogg, cause: String(cString: ope_strerror(status))))
        }
        guard let encoder = ope_encoder_create_callbacks(&callbacks, Unmanaged.passUnretained(sink).toOpaque(), comments,
                                                         Int32(format.sampleRate), Int32(format.channels), 0, &status) else {
            throw failure(status)
        }
        // The encoder writes through `sink` until it is destroyed: both go together.
        defer { withExtendedLifetime(sink) { ope_encoder_destroy(encoder) } }
        status = rchat_ope_voice(encoder, bitrate)
        guard status == OPE_OK else { throw failure(status) }

        guard lseek(input, off_t(format.dataOffset), SEEK_SET) >= 0 else { throw MediaError(.file(action: "read", path: wav, errno: errno)) }
        var remaining = format.frames
        while remaining > 0 {
            let frames = min(block, remaining)
            let bytes = try FileBytes.read(input, count: frames * format.channels * 2, path: wav)
            guard bytes.count == frames * format.channels * 2 else { throw MediaError(.unsupportedWAV(path: wav, cause: "shorter than its header says")) }
            let samples = bytes.withUnsafeBytes { raw in
                (0..<frames * format.channels).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
            }
            status = ope_encoder_write(encoder, samples, Int32(frames))
            guard status == OPE_OK else { throw failure(status) }
            remaining -= frames
        }
        status = ope_encoder_drain(encoder)
        guard status == OPE_OK else { throw failure(status) }
    }

    /// The duration of an Ogg Opus file (libopusfile); a truncated or non-Opus file is an error.
    public static func duration(ofOggOpus path: String) throws(MediaError) -> Double {
        let file = try OpusFile(path: path)
        defer { file.close() }
        let samples = op_pcm_total(file.handle, -1)
        guard samples >= 0 else { throw MediaError(.notOggOpus(path: path, cause: OpusFile.describe(Int32(samples)))) }
        return Double(samples) / Double(decodedRate)
    }

    /// The longest voice message played: two hours. Its length is read from the final
    /// granule position before anything is decoded, so a small file claiming days (or one of
    /// one-byte packets that decodes to hours) is refused at once.
    public static let maximumPlaySeconds = 2 * 3600

    /// Streams the file, decoded, as a 16-bit 48 kHz WAV to `fd` (a pipe to the player):
    /// nothing is written to disk. The header says the exact length, read first; decoding
    /// stops at that length, and when the reader goes away (EPIPE). Blocks while the reader
    /// is slow: run it off the UI thread. SIGPIPE is blocked on the calling thread, so a
    /// player that quits early ends the stream with EPIPE instead of killing the process.
    public static func stream(ogg: String, to fd: Int32, named destination: String = "the player",
                              maximumSeconds: Int = maximumPlaySeconds) throws(MediaError) {
        var broken = sigset_t()
        sigemptyset(&broken)
        sigaddset(&broken, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &broken, nil)
        let file = try OpusFile(path: ogg)
        defer { file.close() }
        let total = op_pcm_total(file.handle, -1)
        guard total >= 0 else { throw MediaError(.notOggOpus(path: ogg, cause: OpusFile.describe(Int32(total)))) }
        guard total <= Int64(maximumSeconds * decodedRate) else {
            throw MediaError(.codec(path: ogg, cause: "longer than \(maximumSeconds) seconds"))
        }
        let mono = op_link_count(file.handle) == 1 && op_channel_count(file.handle, -1) == 1
        let channels = mono ? 1 : 2
        try FileBytes.write(fd, WAV.header(channels: channels, sampleRate: decodedRate, frames: Int(total)), path: destination)
        var left = Int(total)
        var buffer = [Int16](repeating: 0, count: block * channels)
        while left > 0 {
            let read = buffer.withUnsafeMutableBufferPointer { samples in
                mono ? op_read(file.handle, samples.baseAddress, Int32(samples.count), nil)
                     : op_read_stereo(file.handle, samples.baseAddress, Int32(samples.count))
            }
            guard read >= 0 else { throw MediaError(.notOggOpus(path: ogg, cause: OpusFile.describe(read))) }
            if read == 0 { break }
            let frames = min(Int(read), left)
            left -= frames
            try FileBytes.write(fd, buffer[0..<frames * channels].map { $0.littleEndian }, path: destination)
        }
    }

    /// Decodes to a new 0600 16-bit 48 kHz WAV (mono stays mono, anything else becomes stereo),
    /// as `stream` writes it to a player. On failure nothing is left at `wav`.
    public static func decode(ogg: String, toWav wav: String) throws(MediaError) {
        let output = try FileBytes.create(wav)
        do throws(MediaError) {
            try stream(ogg: ogg, to: output, named: wav)
            close(output)
        } catch {
            close(output)
            unlink(wav)
            throw error
        }
    }
}

/// Where libopusenc's pages go: the output descriptor, and the errno of a failed write.
private final class OggSink {
    let fd: Int32
    var failure: Int32 = 0

    init(fd: Int32) { self.fd = fd }
}

/// An Ogg Opus file opened by libopusfile after its pages were found complete.
private final class OpusFile {
    let handle: OpaquePointer

    init(path: String) throws(MediaError) {
        try OggPages.checkComplete(path)
        var status: Int32 = 0
        guard let handle = op_open_file(path, &status) else {
            throw MediaError(.notOggOpus(path: path, cause: Self.describe(status)))
        }
        self.handle = handle
    }

    func close() { op_free(handle) }

    /// libopusfile's error codes in words.
    static func describe(_ code: Int32) -> String {
        switch code {
        case OP_HOLE: return "a gap in the audio"
        case OP_EREAD: return "read error"
        case OP_EFAULT: return "out of memory"
        case OP_EIMPL: return "an Opus feature libopusfile does not implement"
        case OP_ENOTFORMAT: return "not Ogg Opus"
        case OP_EBADHEADER: return "damaged Opus header"
        case OP_EVERSION: return "unknown Opus version"
        case OP_ENOTAUDIO: return "not audio"
        case OP_EBADPACKET: return "damaged packet"
        case OP_EBADLINK: return "damaged stream link"
        case OP_ENOSEEK: return "cannot seek"
        case OP_EBADTIMESTAMP: return "damaged timestamps"
        default: return "libopusfile error \(code)"
        }
    }
}
