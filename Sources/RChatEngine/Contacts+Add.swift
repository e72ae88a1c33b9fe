import RChatCore
import RChatCrypto
import RChatStore

/// What adding a code did.
public struct AddContactResult: Equatable {
    public enum Change: Equatable {
        case added
        case alreadyPinned
        /// Their code entered again: a new device key (or account key) pinned, Keys don't
        /// match cleared.
        case reverified
        case acceptedRequest
    }
    /// The conversation with this contact (the one the view opens).
    public let conversation: ConversationID
    public let name: String
    public let change: Change
    public let safetyNumber: String
    /// The conversation's saved session did not open (damaged) and was dropped: the next
    /// session starts over.
    public var droppedDamagedSession = false
}

/// A line of `rchat contacts`.
public struct ContactSummary: Equatable {
    public let name: String
    public let state: String
    public let unread: Int
    /// The conversation's disappearing-message timer.
    public let timer: DisappearingTimer
}

extension AccountService {
    /// `rchat add CODE`: pins the account and device keys the code carries, after checking
    /// that the account really certified that device. Entering a known contact's code again
    /// pins what it carries now ("scan in person").
    public func addContact(_ code: ContactCode, name chosenName: String?) throws(EngineError) -> AddContactResult {
        let me = try identity()
        guard !constantTimeEqual(code.accountKey, me.accountKey.publicKey) else {
            throw .usage("that is your own contact code: you cannot add yourself")
        }
        do { try code.verify() } catch { throw .usage(error.description) }
        guard Signature.agreementPublicKey(fromSigningKey: code.accountKey) != nil else {
            throw .usage("the code's account key is not a valid key")
        }
        let now = clock.now()
        let safety = SafetyNumber.of(me.accountKey.publicKey, code.accountKey)
        let result = try Self.wrap {
            try store.transaction { tx -> AddContactResult in
                if let known = try tx.contact(accountKey: code.accountKey) {
                    let keysChanged = try tx.updatePinnedKeys(contact: known.id, accountKey: code.accountKey, deviceKey: code.deviceKey,
                                                              deviceCertificate: code.deviceCertificate, at: now)
                    try tx.setRelayAddress(contact: known.id, code.relay.description)
                    try tx.setCode(contact: known.id, code.text)
                    if known.kind == .member {
                        // Met through a group: a contact now, with a conversation of their own.
                        let name = chosenName ?? code.name
                        guard try tx.contact(named: name) == nil else {
                            throw EngineError.usage("a contact named \(name) already exists; choose another name with --name NAME")
                        }
                        try tx.makeContact(member: known.id, name: name, at: now)
                        return AddContactResult(conversation: known.id.conversation, name: name, change: .added, safetyNumber: safety)
                    }
                    var name = known.name
                    if let chosenName, chosenName != known.name {
                        try tx.rename(contact: known.id, to: chosenName)
                        name = chosenName
                    }
                    let wasRequest = known.state == .request
                    let wasMismatch = known.state == .keysDontMatch
                    if known.state != .ok { try tx.setState(contact: known.id, .ok) }
                    if known.isDeleted {
                        try tx.setDeleted(contact: known.id, false)
                        return AddContactResult(conversation: known.id.conversation, name: name, change: .added, safetyNumber: safety)
                    }
                    let change: AddContactResult.Change = wasRequest ? .acceptedRequest
                        : (keysChanged || wasMismatch) ? .reverified : .alreadyPinned
                    // Their device is verified now: "Sam is using a new device…" is no longer true.
                    if keysChanged { try tx.removeNewDeviceRows(contact: known.id) }
                    var result = AddContactResult(conversation: known.id.conversation, name: name, change: change, safetyNumber: safety)
                    // Entering the code again is how a damaged saved session is let go.
                    if try hasDamagedState(known, in: tx) {
                        try tx.removeSealedState(contact: known.id)
                        result.droppedDamagedSession = true
                    }
                    return result
                }
                let name = chosenName ?? code.name
                if let mismatched = try tx.contact(named: name), mismatched.state == .keysDontMatch, !mismatched.isDeleted {
                    // Keys don't match, and their code checked again: whatever keys it carries
                    // are theirs now, a new account key too (a new install without rotation).
                    // The old session cannot be used with them: the next one starts over.
                    try tx.updatePinnedKeys(contact: mismatched.id, accountKey: code.accountKey, deviceKey: code.deviceKey,
                                            deviceCertificate: code.deviceCertificate, at: now)
                    try tx.setRelayAddress(contact: mismatched.id, code.relay.description)
                    try tx.setInviteToken(contact: mismatched.id, code.inviteToken)
                    try tx.setCode(contact: mismatched.id, code.text)
                    try tx.setState(contact: mismatched.id, .ok)
                    try tx.removeSealedState(contact: mismatched.id)
                    try tx.removeNewDeviceRows(contact: mismatched.id)
                    return AddContactResult(conversation: mismatched.id.conversation, name: mismatched.name, change: .reverified,
                                            safetyNumber: safety)
                }
                if try tx.contact(named: name) != nil {
                    throw EngineError.usage("a contact named \(name) already exists; choose another name with --name NAME")
                }
                let added = try tx.addContact(NewContact(name: name, accountKey: code.accountKey, deviceKey: code.deviceKey,
                                                 deviceCertificate: code.deviceCertificate, relayAddress: code.relay.description,
                                                 inviteToken: code.inviteToken, state: .ok, code: code.text), at: now)
                return AddContactResult(conversation: added.id.conversation, name: name, change: .added, safetyNumber: safety)
            }
        }
        // A running engine picks up the new (or accepted, or re-verified) contact at once.
        WakeSignal.poke(home: locations.home)
        return result
    }

    public func contactSummaries() throws(EngineError) -> [ContactSummary] {
        try Self.wrap {
            try store.contacts().map { c in
                ContactSummary(name: c.name, state: c.displayState.rawValue, unread: try store.unreadCount(contact: c.id),
                               timer: try store.conversationTimer(contact: c.id).timer)
            }
        }
    }
}
