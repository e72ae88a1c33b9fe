import RChatNet
import RChatWire

/// Invite tokens and the mailbox each was registered by. A token is derived from its
/// mailbox (`InviteToken.derived`), so only that mailbox can register it; a registration of
/// a token another mailbox holds is refused, never moved.
///
/// No relay-wide share one client can fill (issue 27, finding 12): the newest
/// `maxInvitesPerMailbox` per mailbox, at most `invitesPerHost` registered from one host
/// (an IPv4 address, an IPv6 /64), `maxInvites` in all, and a token not registered again
/// within `inviteExpirySeconds` is forgotten. An engine registers its invite at every
/// connection, and `sweep` refreshes the tokens of the mailboxes connected now, so a live
/// client's invite never expires.
struct InviteRegistry {
    struct Entry: Equatable {
        let mailbox: MailboxID
        /// The host it was first registered from (nil: loaded from `--persist`, not counted).
        let host: HostAddress?
        /// When it was last registered or refreshed (relay time, seconds).
        var refreshed: Int64
    }

    private(set) var entries: [InviteToken: Entry] = [:]
    private var byMailbox: [MailboxID: [InviteToken]] = [:]
    private(set) var countByHost: [HostAddress: Int] = [:]

    enum Outcome: Hashable {
        case registered(dropped: InviteToken?)
        /// Registered before by the same mailbox: its time is now `now`.
        case refreshed
        case takenByAnother
        case hostFull
        case full
    }

    var count: Int { entries.count }

    mutating func register(_ token: InviteToken, for mailbox: MailboxID, from host: HostAddress?, now: Int64,
                           limits: RelayConfiguration) -> Outcome {
        if let entry = entries[token] {
            guard entry.mailbox == mailbox else { return .takenByAnother }
            entries[token]!.refreshed = now
            return .refreshed
        }
        var list = byMailbox[mailbox, default: []]
        // The newest few per mailbox: an old contact code stops working, nothing grows.
        let dropped = list.count >= limits.maxInvitesPerMailbox ? list.first : nil
        let sameHost = dropped.flatMap { entries[$0]?.host } == host && host != nil
        if let host, countByHost[host, default: 0] - (sameHost ? 1 : 0) >= limits.invitesPerHost { return .hostFull }
        guard entries.count - (dropped == nil ? 0 : 1) < limits.maxInvites else { return .full }
        if let dropped {
            list.removeFirst()
            forgetEntry(dropped)
        }
        list.append(token)
        byMailbox[mailbox] = list
        entries[token] = Entry(mailbox: mailbox, host: host, refreshed: now)
        if let host { countByHost[host, default: 0] += 1 }
        return .registered(dropped: dropped)
    }

    func owner(of token: InviteToken) -> MailboxID? { entries[token]?.mailbox }

    /// Forgets every token of `mailbox`; returns them.
    mutating func removeAll(of mailbox: MailboxID) -> [InviteToken] {
        let tokens = byMailbox.removeValue(forKey: mailbox) ?? []
        for token in tokens { forgetEntry(token) }
        return tokens
    }

    /// What a sweep changed: tokens forgotten, and tokens of connected mailboxes refreshed.
    struct Swept: Equatable {
        var expired: [InviteToken] = []
        var refreshed: [InviteToken] = []
    }

    /// At `now`: a token of a mailbox `isConnected` says is connected is refreshed once half
    /// its time has passed; any other not refreshed within `expirySeconds` is forgotten.
    mutating func sweep(now: Int64, expirySeconds: Int, isConnected: (MailboxID) -> Bool) -> Swept {
        var swept = Swept()
        let expiredAt = now - Int64(expirySeconds), refreshAt = now - Int64(expirySeconds) / 2
        for (token, entry) in entries where entry.refreshed <= refreshAt {
            if isConnected(entry.mailbox) {
                entries[token]!.refreshed = now
                swept.refreshed.append(token)
            } else if entry.refreshed <= expiredAt {
                swept.expired.append(token)
            }
        }
        for token in swept.expired {
            guard let mailbox = entries[token]?.mailbox else { continue }
            forgetEntry(token)
            byMailbox[mailbox]?.removeAll { $0 == token }
            if byMailbox[mailbox]?.isEmpty == true { byMailbox[mailbox] = nil }
        }
        return swept
    }

    private mutating func forgetEntry(_ token: InviteToken) {
        guard let entry = entries.removeValue(forKey: token), let host = entry.host else { return }
        let left = countByHost[host, default: 1] - 1
        countByHost[host] = left > 0 ? left : nil
    }
}
