/// What is typed in the composer for one conversation and not sent yet: kept per
/// conversation while the view runs and in the store across restarts.
public struct Draft: Equatable, Sendable {
    /// Never empty: an empty composer has no draft.
    public let text: String
    /// Where the cursor was, in characters (grapheme clusters) from the start, 0…count.
    public let cursor: Int

    /// The longest draft the store keeps, in UTF-8 bytes: far above what one message may
    /// carry, so a long paste being cut down is still kept.
    public static let maximumBytes = 1024 * 1024

    /// nil for empty text: nothing to keep. The cursor is clamped into the text.
    public init?(text: String, cursor: Int) {
        guard !text.isEmpty else { return nil }
        self.text = text
        self.cursor = min(max(0, cursor), text.count)
    }
}
