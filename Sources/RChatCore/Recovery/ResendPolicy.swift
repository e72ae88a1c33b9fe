/// What to do about one message a contact's phone reported it could not read (README,
/// "When a contact loses their state"). Pure: the engine
/// gathers the facts, this decides. It decides per delivery: the facts are those of the
/// message's delivery to that contact (its status, whether it went to them again
/// automatically, their keys when it was sent: the store's `StoredDelivery`), and the daily
/// limit counts that contact's automatic resends; another member's copy of the same message
/// has facts of its own.
public enum ResendPolicy {
    public static let window: Int64 = 72 * 3600
    public static let dailyLimit = 50
    public static let day: Int64 = 24 * 3600

    /// How the notice that named the message was signed.
    public enum NoticeSigner: Sendable, Equatable {
        /// The contact's pinned device key: the usual same-phone reinstall.
        case pinnedDevice
        /// A device key the contact's account certified but that is not pinned: a new phone
        /// (or a stolen copy of the account keys — which must never resend automatically).
        case unpinnedDevice
    }

    public struct Facts: Sendable, Equatable {
        public var signer: NoticeSigner
        /// The contact's pinned keys are the ones the message was sent to.
        public var keysUnchangedSinceSent: Bool
        public var sentAt: Int64
        public var status: MessageStatus
        public var autoResentBefore: Bool

        public init(signer: NoticeSigner, keysUnchangedSinceSent: Bool, sentAt: Int64, status: MessageStatus, autoResentBefore: Bool) {
            self.signer = signer
            self.keysUnchangedSinceSent = keysUnchangedSinceSent
            self.sentAt = sentAt
            self.status = status
            self.autoResentBefore = autoResentBefore
        }
    }

    public enum Decision: Sendable, Equatable {
        /// Send it again by itself, same id, marked Resent.
        case resendAutomatically
        /// Not delivered; `offerResend` while the contact's keys are unchanged.
        case notDelivered(offerResend: Bool)
        /// Delivered or Read already: a receipt proved it arrived, nothing changes.
        case keep
    }

    /// `autoResentInLastDay`: automatic resends to this contact in the 24 hours before
    /// `now`, counting those already decided in this batch.
    public static func decide(_ facts: Facts, now: Int64, autoResentInLastDay: Int) -> Decision {
        if facts.status.isFinal { return .keep }
        let automatic = facts.signer == .pinnedDevice
            && facts.keysUnchangedSinceSent
            && now - facts.sentAt <= window
            && !facts.autoResentBefore
            && autoResentInLastDay < dailyLimit
        return automatic ? .resendAutomatically : .notDelivered(offerResend: facts.keysUnchangedSinceSent)
    }

    /// Decides a whole notice in order, counting the automatic resends against the limit as
    /// it goes.
    public static func decide(_ all: [Facts], now: Int64, autoResentInLastDay: Int) -> [Decision] {
        var count = autoResentInLastDay
        return all.map { facts in
            let decision = decide(facts, now: now, autoResentInLastDay: count)
            if decision == .resendAutomatically { count += 1 }
            return decision
        }
    }

    /// The user's Resend of one of their messages (`r` on it or on a row, `rchat resend`).
    public enum ByUser: Sendable, Equatable {
        case resend
        /// Delivered or Read: it arrived, nothing to resend.
        case arrived
        /// It was written for keys the contact no longer has, and no row written since the
        /// change offers it: Resend goes only to the keys a message was written for.
        case keysChanged
        /// Still on its way (Sending, Sent) and offered by no row: `--all` leaves it; named
        /// by its id, it goes again.
        case notOffered
    }

    /// `offeredByRow`: a row offers Resend for it (a keys-changed row is the user's choice
    /// to trust the change).
    public static func byUser(status: MessageStatus, keysUnchangedSinceSent: Bool, offeredByRow: Bool) -> ByUser {
        if status.isFinal { return .arrived }
        if !keysUnchangedSinceSent && !offeredByRow { return .keysChanged }
        return status.offersResend || offeredByRow ? .resend : .notOffered
    }
}
