/// What may be sent as an attachment, by size: not an empty file, nothing above the
/// account's limit (the setting `max-attachment-mb`, 100 by default).
///
/// A megabyte here is 1,048,576 bytes (1 MB = 1024 × 1024 bytes, as `ByteCount` shows
/// sizes), so "the limit is 100 MB" means 104,857,600 bytes and a file shown as 100.0 MB fits.
public struct AttachmentLimits: Equatable, Sendable {
    public static let bytesPerMB: UInt64 = 1_048_576
    public static let defaultMaximumMB: UInt64 = 100

    /// The largest attachment, in MB of 1,048,576 bytes; at most what an attachment can say
    /// (`Attachment.maximumSize`, 1,048,576 MB).
    public let maximumMB: UInt64

    public init(maximumMB: UInt64 = defaultMaximumMB) {
        self.maximumMB = min(maximumMB, Attachment.maximumSize / Self.bytesPerMB)
    }

    /// The largest size that may be sent, in bytes.
    public var maximumBytes: UInt64 { maximumMB * Self.bytesPerMB }

    /// Whether a file of `size` bytes may be sent.
    public func check(size: UInt64) -> SizeCheck {
        if size == 0 { return .empty }
        if size > maximumBytes { return .tooLarge(size: size, limitMB: maximumMB) }
        return .fits
    }

    /// What `check` found.
    public enum SizeCheck: Equatable, Sendable {
        case fits
        case empty
        /// Above the limit: the file's size in bytes and the limit in MB.
        case tooLarge(size: UInt64, limitMB: UInt64)

        /// The one line a user is shown for a file called `name` (display text: it goes out
        /// through `TerminalText` like any), nil when it fits.
        public func message(name: String) -> String? {
            switch self {
            case .fits:
                return nil
            case .empty:
                return "\(name) is empty: there is nothing to send"
            case let .tooLarge(size, limitMB):
                return "\(name) is \(ByteCount.display(size, roundingUp: true)); the limit is \(limitMB) MB "
                    + "(rchat settings max-attachment-mb N changes it)"
            }
        }
    }
}
