import RChatCore
import RChatStore

/// What one pairwise channel sent in its current session that the relay has not settled,
/// and what the peer reported on it: the one list of what a session's end forgets. Every
/// path that ends a session goes through `forget` — the link dropped or given up (a
/// connection closed, a block, Keys don't match, new keys, the end of a run: all
/// `PairwiseChannel.apply`), and a new session replacing the current one (`begin`).
/// What was forgotten goes again in the next session, from the store.
struct SessionTraffic {
    /// Messages sent in the current session (or as requests in this run): not sent twice.
    var sent: Set<MessageRowID> = []
    /// Chunks of attachments sent on this session, not yet taken by the relay.
    var chunksInFlight: [MessageRowID: Set<Int>] = [:]
    /// Whole-file receipts sent, not yet taken by the relay.
    var fileReceiptsInFlight: Set<MessageID> = []
    /// Files being sent: the chunks the receiver said it stored, and when (engine ticks).
    var peerFileProgress: [MessageRowID: (chunks: Int, at: Double)] = [:]
    var deliveredInFlight = DeliveredReceiptsInFlight()
    var readReceiptsInFlight: Set<MessageID> = []
    /// A group's Delivered receipts sent for this contact's messages, through this position,
    /// not yet taken by the relay (one frame in flight per group).
    var groupDeliveredInFlight: [ConversationID: Int64] = [:]
    /// Could-not-read notices sent, not yet taken by the relay.
    var noticeInFlight: Set<MessageID> = []
    /// The started-over notice went on the current link and the relay has not taken it yet.
    var startedOverNoticeInFlight = false

    /// How a session ended.
    enum End {
        /// The link went (dropped, given up, detached): nothing of the session is in flight.
        case ended
        /// A new session began on the link in its place. A notice the relay has not answered
        /// stays in flight: its answer still settles it, and sent again now it would reach
        /// the contact twice.
        case replaced
    }

    /// Forgets what the session that ended had in flight.
    mutating func forget(_ end: End) {
        let notice = (noticeInFlight, startedOverNoticeInFlight)
        self = SessionTraffic()
        if case .replaced = end { (noticeInFlight, startedOverNoticeInFlight) = notice }
    }

    /// Nothing in flight and nothing reported.
    var isEmpty: Bool {
        sent.isEmpty && chunksInFlight.isEmpty && fileReceiptsInFlight.isEmpty && peerFileProgress.isEmpty
            && deliveredInFlight.isEmpty && deliveredInFlight.sentThrough == nil && readReceiptsInFlight.isEmpty
            && noticeInFlight.isEmpty && !startedOverNoticeInFlight && groupDeliveredInFlight.isEmpty
    }
}
