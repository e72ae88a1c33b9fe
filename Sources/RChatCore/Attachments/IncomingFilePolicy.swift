/// Whether a file a contact offers (its message item, with the size it declares) is taken
/// in: a contact's word about a size is checked before anything is written for it.
///
/// - Above the account's limit (`max-incoming-mb`, 2048 MB by default): refused.
/// - More than `maximumMovingPerContact` of the contact's files still arriving: refused. A
///   sender keeps to the same bound (it starts a file only once fewer than that many are
///   not yet taken whole), so a stock client never meets it. Refused rather than made to
///   wait: chunks come in the one ordered stream of the conversation, so holding back one
///   file's chunks at the relay would hold back every message behind them, and chunks
///   dropped while a file waited would have to be asked for again.
/// - Not fitting the free disk, with what the contact's files arriving still need and a
///   margin: refused (`free` nil: the disk could not be asked, and the write decides). Only
///   the same contact's files count, so that offers one contact never completes cannot
///   make another's refused; files of several contacts that together overfill the disk
///   meet the write's ENOSPC, which discards the one it hit.
///
/// A refused file is recorded as discarded with a row; its chunks are acknowledged and
/// dropped, and the sender is told why (`wire`, envelope kind 12) for a row of its own.
public enum IncomingFilePolicy {
    public static let defaultMaximumMB: UInt64 = 2048
    public static let maximumMovingPerContact = 16
    /// Left free on the disk beyond what the files arriving need.
    public static let diskMarginBytes: UInt64 = 64 * 1_048_576

    public enum Decision: Equatable, Sendable {
        case accept
        case overLimit(limitMB: UInt64)
        case tooMany(moving: Int)
        case noRoom(freeBytes: UInt64)
    }

    /// `moving`: the contact's files still arriving; `reserved`: what they still need on
    /// the disk; `free`: what the disk has for this user.
    public static func decide(size: UInt64, limitMB: UInt64, moving: Int, reserved: UInt64, free: UInt64?) -> Decision {
        let limit = limitMB.multipliedReportingOverflow(by: AttachmentLimits.bytesPerMB)
        if !limit.overflow, size > limit.partialValue { return .overLimit(limitMB: limitMB) }
        if moving >= maximumMovingPerContact { return .tooMany(moving: moving) }
        if let free {
            let (need, overflow) = size.addingReportingOverflow(reserved.saturatingAdd(diskMarginBytes))
            if overflow || need > free { return .noRoom(freeBytes: free) }
        }
        return .accept
    }

    /// The row for a refused file called `name` offered by `contact` (display text: rows go
    /// out through `TerminalText`); nil when it is accepted.
    public static func row(_ decision: Decision, name: String, size: UInt64, contact: String) -> String? {
        let offered = "\(contact) offered \(name) (\(ByteCount.display(size, roundingUp: true)))"
        switch decision {
        case .accept:
            return nil
        case .overLimit(let limitMB):
            return "\(offered), over your limit of \(limitMB) MB; it was not downloaded (rchat settings max-incoming-mb N changes the limit)."
        case .tooMany(let moving):
            return "\(offered) while \(moving) of their files were still arriving; it was not downloaded."
        case .noRoom(let free):
            return "\(offered), more than this disk can take (\(ByteCount.display(free)) free); it was not downloaded."
        }
    }

    /// Why it was not downloaded, for the file's own line ("This file was discarded: …").
    public static func reason(_ decision: Decision) -> String? {
        switch decision {
        case .accept: nil
        case .overLimit(let limitMB): "it is over your limit of \(limitMB) MB, so it was not downloaded"
        case .tooMany: "too many files from this contact were arriving at once, so it was not downloaded"
        case .noRoom: "the disk had no room for it, so it was not downloaded"
        }
    }

    /// A refusal as the receiver tells the sender (envelope kind 12, `fileRefused`): why, and
    /// its figure; nil for `accept`.
    public static func wire(_ decision: Decision) -> (why: UInt8, figure: UInt64)? {
        switch decision {
        case .accept: nil
        case .overLimit(let limitMB): (1, limitMB)
        case .tooMany(let moving): (2, UInt64(moving))
        case .noRoom(let free): (3, free)
        }
    }

    /// What `wire` made; nil for a reason this version does not know.
    public static func refusal(why: UInt8, figure: UInt64) -> Decision? {
        switch why {
        case 1: .overLimit(limitMB: figure)
        case 2: figure <= UInt64(Int.max) ? .tooMany(moving: Int(figure)) : nil
        case 3: .noRoom(freeBytes: figure)
        default: nil
        }
    }

    /// The sender's row when `contact` refused its file called `name`; nil for `accept`.
    public static func senderRow(_ decision: Decision, name: String, contact: String) -> String? {
        switch decision {
        case .accept: nil
        case .overLimit(let limitMB): "\(contact) did not download \(name): it is over their limit of \(limitMB) MB."
        case .tooMany: "\(contact) did not download \(name): too many of your files were arriving there at once."
        case .noRoom: "\(contact) did not download \(name): their disk had no room for it."
        }
    }

    /// The row for a file whose chunk could not be written (`reason`: the system's, such as
    /// "No space left on device").
    public static func writeFailedRow(name: String, contact: String, reason: String) -> String {
        "\(name) from \(contact) could not be saved (\(reason)) and was discarded."
    }
}

extension UInt64 {
    fileprivate func saturatingAdd(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
