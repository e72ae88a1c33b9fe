/// Who may be sent what (README, "When a contact loses their state"; seed 000, "Tap to
/// resend"): the one rule every frame to a contact goes through. Pure: the engine gathers
/// the facts, this decides.
///
/// A session made with the contact's pinned account key but a device key that is not
/// pinned is what a new phone looks like — and what someone with a stolen copy of the
/// account keys looks like. What the user sends or resends by hand after rChat told them
/// ("Sam is using a new device…") goes to it: the keypress is the consent. Nothing rChat
/// would send by itself does (an automatic resend, a message written before that row,
/// receipts, notices, key announcements) until the user enters the contact's code again,
/// which pins the device. Keys that don't match, a block or a delete stop everything; a
/// message request not accepted yet holds everything.
public enum SendPolicy {
    /// The contact as the user keeps them.
    public enum Contact: Sendable, Equatable, CaseIterable {
        case ok
        /// A handshake proved an account key other than the pinned one.
        case keysDontMatch
        case blocked
        case deleted
        /// Someone who wrote first and was not accepted yet.
        case request
    }

    /// The device the session's handshake proved, under the contact's pinned account key.
    public enum Device: Sendable, Equatable {
        case pinned
        /// Certified by the contact's account but not pinned. `announcedAt`: the conversation
        /// position of the row that told the user ("Sam is using a new device…"); nil: no
        /// row told them.
        case unpinned(announcedAt: Int64?)
    }

    /// Who put a message on its way.
    public enum Origin: Sendable, Equatable {
        /// The user, writing it or pressing Resend, when the conversation's next position
        /// was `askedAt`: every row before that position was in the conversation when they asked.
        case byHand(askedAt: Int64)
        /// rChat itself (an automatic resend), or a message queued before this rule was
        /// recorded.
        case automatic
    }

    public enum Frame: Sendable, Equatable {
        /// A message or a file (with its chunks).
        case message(Origin)
        /// Delivered and Read receipts, file receipts and file progress.
        case receipt
        /// This side's could-not-read notice.
        case notice
        /// The announcement of this side's new account key.
        case keyAnnouncement
        /// An empty frame of the steady pace: it carries nothing, and hides when the user's
        /// own messages go.
        case cover
    }

    /// Why something waits.
    public enum Hold: Sendable, Equatable, CaseIterable {
        /// The session is with a device the user has not verified: until they enter the
        /// contact's code again (or, for a message, send it by hand there).
        case newDevice
        /// Someone who wrote first: until the user accepts them.
        case notAccepted
    }

    public enum Decision: Sendable, Equatable {
        case send
        case hold(Hold)
        /// Never to this contact as they stand: a message is Failed to send, anything else
        /// is not sent.
        case refuse
    }

    public static func decide(_ frame: Frame, to contact: Contact, device: Device) -> Decision {
        switch contact {
        case .ok: break
        case .request: return .hold(.notAccepted)
        case .keysDontMatch, .blocked, .deleted: return .refuse
        }
        guard case .unpinned(let announcedAt) = device else { return .send }
        switch frame {
        case .cover:
            return .send
        case .message(.byHand(let askedAt)):
            // Asked after the row was there: the user chose to send to the new device.
            guard let announcedAt, announcedAt < askedAt else { return .hold(.newDevice) }
            return .send
        case .message(.automatic), .receipt, .notice, .keyAnnouncement:
            return .hold(.newDevice)
        }
    }

    /// What the user writes, sends as a file, changes (a timer) or resends now, before any
    /// session's device is known: it goes under `decide` once a session is up (`.send`),
    /// waits for the user to accept a request (`.hold(.notAccepted)`), or can never reach
    /// the contact as they stand (`.refuse`: blocked, deleted, keys that don't match) — then
    /// it is stored Failed to send and nothing leaves.
    public static func decideWriting(to contact: Contact) -> Decision {
        decide(.message(.byHand(askedAt: .max)), to: contact, device: .pinned)
    }

    /// Whether sessions may be set up with the contact at all (codes presented, links kept):
    /// only while nothing stops or holds what goes to them. A contact blocked, deleted, with
    /// keys that don't match or not accepted yet has no link.
    public static func mayLink(with contact: Contact) -> Bool {
        decideWriting(to: contact) == .send
    }

    /// What a message still in the outbox waits for, as `rchat list` and the view say it
    /// (nil: it is on its way as usual).
    public static func words(_ hold: Hold, name: String) -> String {
        switch hold {
        case .newDevice: "waiting for you to verify \(name)'s new device"
        case .notAccepted: "waiting for you to accept \(name)'s message request"
        }
    }
}
