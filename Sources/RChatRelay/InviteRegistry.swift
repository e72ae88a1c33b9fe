import RChatWire

/// Invite tokens and the mailbox each was registered by. A token is derived from its
/// mailbox (`InviteToken.derived`), so only that mailbox can register it; a registration of
/// a token another mailbox holds is refused, never moved.
struct InviteRegistry {
    private(set) var owners: [InviteToken: MailboxID] = [:]
    private var byMailbox: [MailboxID: [InviteToken]] = [:]

    enum Outcome: Equatable {
        case registered(dropped: InviteToken?)
        case alreadyRegistered
        case takenByAnother
        case full
    }

    mutating func register(_ token: InviteToken, for mailbox: MailboxID, limits: RelayConfiguration) -> Outcome {
        if let owner = owners[token] { return owner == mailbox ? .alreadyRegistered : .takenByAnother }
        guard owners.count < limits.maxInvites else { return .full }
        var list = byMailbox[mailbox, default: []]
        var dropped: InviteToken?
        // The newest few per mailbox: an old contact code stops working, nothing grows.
        if list.count >= limits.maxInvitesPerMailbox {
            dropped = list.removeFirst()
            owners[dropped!] = nil
        }
        list.append(token)
        byMailbox[mailbox] = list
        owners[token] = mailbox
        return .registered(dropped: dropped)
    }

    func owner(of token: InviteToken) -> MailboxID? { owners[token] }

    /// Forgets every token of `mailbox`; returns them.
    mutating func removeAll(of mailbox: MailboxID) -> [InviteToken] {
        let tokens = byMailbox.removeValue(forKey: mailbox) ?? []
        for token in tokens { owners[token] = nil }
        return tokens
    }
}
