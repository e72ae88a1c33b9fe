import RChatCore

/// The proofs a membership change carries (layout at `MembershipChange`): its author's
/// account-key signature over every field, domain-separated from every other signature the
/// account makes (`MembershipChange.signatureLabel`), and the signatures of the contact codes
/// it hands on. Its id is a hash of its whole encoding, signature included.
extension MembershipChange {
    static let idLabel = Array("rchat membership change id v1".utf8)

    /// `action` by `account`, after `parents` (nil group: a create).
    public static func signed(_ action: Action, group: GroupID?, counter: UInt64, parents: [ChangeID], by account: SigningKey) -> VerifiedChange {
        var change = MembershipChange(group: group, author: account.publicKey, counter: counter, parents: parents, action: action)
        change.signature = account.sign(signatureLabel + change.signedFields)
        return VerifiedChange(id: change.id, change: change)
    }

    /// The next change of `log`'s group by `account`: after its heads, its counter one more.
    public static func next(_ action: Action, in log: GroupLog, by account: SigningKey) -> VerifiedChange {
        signed(action, group: log.group, counter: log.nextCounter, parents: log.sortedHeads, by: account)
    }

    public var id: ChangeID { ChangeID(Hash.blake2b(Self.idLabel + encoded))! }

    public enum Forgery: Error, Equatable, CustomStringConvertible {
        case signature
        /// A contact code it hands on is not what that member's account signed.
        case contactCode

        public var description: String {
            switch self {
            case .signature: "a membership change whose signature does not verify"
            case .contactCode: "a membership change carrying a contact code that does not verify"
            }
        }
    }

    /// This change with its id, once its author's signature and every code it carries verify.
    public func verified() throws(Forgery) -> VerifiedChange {
        guard Signature.verify(signature, message: Self.signatureLabel + signedFields, publicKey: author) else { throw .signature }
        let codes: [ContactCode]
        switch action {
        case .create(_, let members), .add(let members): codes = members
        case .rekey(let code): codes = [code]
        default: codes = []
        }
        for code in codes { do { try code.verify() } catch { throw .contactCode } }
        return VerifiedChange(id: id, change: self)
    }

    /// Decoded and verified: the one way bytes from the network become a change.
    public static func verified(decoding bytes: [UInt8]) throws(MembershipRefusal) -> VerifiedChange {
        let change: MembershipChange
        do { change = try MembershipChange(decoding: bytes) } catch { throw .undecodable(error) }
        do { return try change.verified() } catch { throw .forged(error) }
    }
}

/// Why bytes were not taken as a membership change, before any log sees them.
public enum MembershipRefusal: Error, Equatable, CustomStringConvertible {
    case undecodable(MembershipChange.DecodeError)
    case forged(MembershipChange.Forgery)

    public var description: String {
        switch self {
        case .undecodable(let e): e.description
        case .forged(let e): e.description
        }
    }
}
