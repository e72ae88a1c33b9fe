import Glibc

/// Why a picture or a voice note could not be read, written, recorded or played: one line in
/// words that says what to do, keeping the cause (the errno, the library's own message, the
/// recorder's exit status).
public struct MediaError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// A file could not be opened, read or written: what was being done and the errno.
        case file(action: String, path: String, errno: Int32)
        /// Neither a JPEG nor a PNG by its first bytes.
        case notAnImage(path: String)
        /// The header claims more pixels than the limit: refused before anything is allocated.
        case tooLarge(width: Int, height: Int, limit: Int)
        /// A damaged or unsupported picture, with the decoder's words.
        case damagedImage(format: ImageFormat, path: String, cause: String)
        /// Not an Ogg Opus file, or a damaged or truncated one, with what was wrong.
        case notOggOpus(path: String, cause: String)
        /// A WAV this code does not encode (only 16-bit PCM, mono or stereo, 8–48 kHz), with what it is.
        case unsupportedWAV(path: String, cause: String)
        /// libopusenc or libopusfile failed: the library's error text.
        case codec(path: String, cause: String)
        /// The recorder could not be started, or stopped without leaving a recording.
        case recorder(executable: String, cause: String)
    }

    public let reason: Reason

    public init(_ reason: Reason) { self.reason = reason }

    public var description: String {
        switch reason {
        case .file(let action, let path, let code):
            return "Could not \(action) \(path): \(String(cString: strerror(code))); check the path and its permissions."
        case .notAnImage(let path):
            return "\(path) is not a JPEG or PNG picture; send it as a file instead."
        case .tooLarge(let width, let height, let limit):
            return "The picture is \(width)×\(height) pixels, more than the \(limit) this shows; send it as a file instead."
        case .damagedImage(let format, let path, let cause):
            return "\(path) is a damaged or unsupported \(format == .jpeg ? "JPEG" : "PNG") (\(Self.oneLine(cause))); send it as a file instead."
        case .notOggOpus(let path, let cause):
            return "\(path) is not a complete Ogg Opus voice note (\(Self.oneLine(cause))); record it again."
        case .unsupportedWAV(let path, let cause):
            return "\(path) cannot be made a voice note (\(Self.oneLine(cause))); use 16-bit PCM WAV, mono or stereo, 8–48 kHz."
        case .codec(let path, let cause):
            return "Opus failed on \(path) (\(Self.oneLine(cause))); record it again."
        case .recorder(let executable, let cause):
            return "Recording with \(executable) failed (\(Self.oneLine(cause))); check the microphone and try again."
        }
    }

    /// A C library's message from its NUL-terminated buffer.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }

    /// A library's message on one line, whatever it contains.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
