import RChatCore
import RChatCrypto
import RChatStore

/// Each conversation's saved session state, sealed at rest with the device-bound key
/// (`SealingKey`) and bound to its contact row.
///
/// The account opened, so the sealing key is this device's (`AccountService.init` checks
/// its device seal): a row that does not open, or opens to bytes that do not parse, is
/// damaged. It is reported as `.damaged` and left as it is, never replaced by a new
/// session behind the user's back; entering the contact's code again (`rchat add CODE`)
/// drops it, and the next session starts over.
extension AccountService {
    /// What binds a sealed state to its conversation's row (not to keys, which rotation
    /// changes): "rchat session state v1" ‖ contact row id (u64).
    static func statePurpose(_ contact: ContactID) -> [UInt8] {
        var w = ByteWriter()
        w.raw(Array("rchat session state v1".utf8))
        w.u64(UInt64(bitPattern: contact.rawValue))
        return w.bytes
    }

    func sealState(_ state: SavedSessionState, of contact: ContactID) -> [UInt8] {
        sealingKey.seal(state.serialized(), purpose: Self.statePurpose(contact))
    }

    /// The saved state of a conversation as stored; nil when it has none.
    func savedState(of contact: Contact, in access: some StoreAccess) throws(EngineError) -> SavedSessionState? {
        guard let sealed = try Self.wrap({ try access.sealedState(contact: contact.id) }) else { return nil }
        guard let plain = try? sealingKey.open(sealed.sealed, purpose: Self.statePurpose(contact.id)),
              let state = try? SavedSessionState(serialized: plain)
        else {
            store.database.leaveAsItIs()
            throw .damaged(.savedSession(contact: contact.name, path: locations.databasePath))
        }
        return state
    }

    /// Whether the conversation has a saved state that does not open. A read that fails
    /// is that error, not "no damage".
    func hasDamagedState(_ contact: Contact, in access: some StoreAccess) throws(EngineError) -> Bool {
        do {
            _ = try savedState(of: contact, in: access)
            return false
        } catch {
            if case .damaged = error { return true }
            throw error
        }
    }
}
