import Foundation
import RChatCore
import RChatMedia

/// Voice messages' lengths, read off the UI thread: a file of many Ogg pages takes
/// libopusfile seconds to walk (50 MiB of empty pages: 4.3 s), which on the UI thread froze
/// the view at every opening of its conversation. Each length is read once and kept; a file
/// larger than any voice message rChat records is not read at all.
final class VoiceLengths: @unchecked Sendable {   // every field below is guarded by `lock`
    enum Length: Equatable {
        case reading
        case seconds(Double)
        /// Not Ogg Opus, damaged, or too large to be a voice message: shown without a length.
        case unreadable
    }

    /// The largest file whose length is read: 16 MiB, an hour and more of Opus at the
    /// bitrate rChat records (about 24 kbit/s).
    static let maximumBytes: UInt64 = 16 << 20

    private let lock = NSLock()
    private var lengths: [MessageID: Length] = [:]
    private let queue = DispatchQueue(label: "rchat-voice-lengths")
    private let done: @Sendable () -> Void

    /// `done` is called on the reading thread after each length is known.
    init(done: @escaping @Sendable () -> Void) {
        self.done = done
    }

    /// The length when it is known; otherwise starts reading it (once) and says `.reading`.
    func length(of id: MessageID, path: String) -> Length {
        lock.lock()
        if let known = lengths[id] {
            lock.unlock()
            return known
        }
        lengths[id] = .reading
        lock.unlock()
        queue.async { [self] in
            let length = Self.read(path)
            lock.withLock { lengths[id] = length }
            done()
        }
        return .reading
    }

    /// Whether every length asked for is known.
    var idle: Bool { lock.withLock { !lengths.values.contains(.reading) } }

    static func read(_ path: String) -> Length {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, UInt64(info.st_size) <= maximumBytes else { return .unreadable }
        return (try? VoiceNote.duration(ofOggOpus: path)).map(Length.seconds) ?? .unreadable
    }
}
