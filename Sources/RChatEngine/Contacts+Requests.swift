import RChatCore
import RChatCrypto
import RChatStore

/// What accepting a message request did.
public struct AcceptedRequest: Equatable, Sendable {
    /// The conversation that goes on: the request's own, or the one it replaced.
    public let conversation: ConversationID
    /// The name it goes on under.
    public let name: String
    /// The contact whose keys the request's replaced (nil: accepted as a contact of its own).
    public let replaced: String?
    public let safetyNumber: String
}

/// Answering message requests (`rchat accept`, `decline`, the view's keys on a request) and
/// the safety number (`rchat safety`, `/safety`).
extension AccountService {
    /// The message request a command names; a usage error for an unknown name or a contact
    /// that is not a request.
    public func request(named name: String) throws(EngineError) -> Contact {
        let contact = try contact(named: name)
        guard contact.state == .request else {
            throw .usage("\(contact.name) is not a message request (see rchat contacts)")
        }
        return contact
    }

    /// Pins the keys the request's signed code carried (stored when it arrived; not checked
    /// in person). Alone, the request becomes a contact of its own (unblocked: accepting is
    /// choosing to talk). With `replacing`, that contact's conversation takes those keys
    /// instead — Sam reinstalled without his export — as entering a new code after Keys
    /// don't match does: the old session is dropped, the next starts over, messages written
    /// before the change are not sent again by themselves; the request's messages join the
    /// conversation and the request is gone.
    public func acceptRequest(_ request: Contact, replacing other: Contact? = nil) throws(EngineError) -> AcceptedRequest {
        let me = try identity()
        if let other {
            guard other.id != request.id, other.state != .request, !other.isDeleted else {
                throw .usage("--replace takes a contact who is not a message request: \(other.name) is one (see rchat contacts)")
            }
        }
        let t = clock.now()
        let safety = SafetyNumber.of(me.accountKey.publicKey, request.accountKey)
        let accepted = try Self.wrap {
            try store.transaction { tx -> AcceptedRequest in
                // Answered by another process meanwhile: nothing changes.
                guard let current = try tx.contact(id: request.id), current.state == .request, !current.isDeleted else {
                    throw EngineError.usage("\(request.name) is not a message request any more (see rchat contacts)")
                }
                guard let other else {
                    try tx.setState(contact: current.id, .ok)
                    if current.isBlocked { try tx.setBlocked(contact: current.id, false) }
                    return AcceptedRequest(conversation: current.id.conversation, name: current.name, replaced: nil, safetyNumber: safety)
                }
                try tx.updatePinnedKeys(contact: other.id, accountKey: current.accountKey, deviceKey: current.deviceKey,
                                        deviceCertificate: current.deviceCertificate, at: t)
                try tx.setRelayAddress(contact: other.id, current.relayAddress)
                try tx.setInviteToken(contact: other.id, current.inviteToken)
                try tx.setState(contact: other.id, .ok)
                try tx.removeSealedState(contact: other.id)
                try tx.mergeRequest(current.id, into: other.id)
                return AcceptedRequest(conversation: other.id.conversation, name: other.name, replaced: other.name, safetyNumber: safety)
            }
        }
        WakeSignal.poke(home: locations.home)
        return accepted
    }

    /// `rchat decline`: the request is deleted as `rchat delete` deletes a contact — gone
    /// from the list with its messages, and later requests from the same keys are dropped
    /// (their code, added, brings them back).
    public func declineRequest(_ request: Contact) throws(EngineError) {
        try change(request, .delete)
    }

    /// The number `rchat add` prints: the same on both sides for the same two account keys.
    public func safetyNumber(of contact: Contact) throws(EngineError) -> String {
        SafetyNumber.of(try identity().accountKey.publicKey, contact.accountKey)
    }

    /// The conversation a request could replace: the contact whose name it was listed
    /// beside (`RequestNames`) and whose conversation shows the row about it.
    func namesake(of request: Contact, in access: some StoreAccess) throws -> Contact? {
        guard request.state == .request, let name = RequestNames.namesake(of: request.name),
              let namesake = try access.contact(named: name), !namesake.isDeleted, namesake.state != .request,
              try access.systemRowPosition(contact: namesake.id, kind: .namesakeRequest(request.accountKey), since: 0) != nil
        else { return nil }
        return namesake
    }
}
