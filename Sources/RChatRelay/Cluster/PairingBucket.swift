import RChatCore

/// The `rchat-pairing` bucket: a code's entry names the node and session that wait with it,
/// so that its peer finds it from any node. Made only where no entry is — a publish
/// expecting none, which a clustered stream checks as it stores (`JetStreamSubjects`) — so
/// two nodes presenting one code at once never both believe they wrote it: one writes it,
/// the other finds it and asks for the match. A matched code's entry, and an entry taken
/// over, are purged (no deletion mark: a key-value create over a mark is a write on its
/// revision, which this server version checks only before proposing it, so two creates
/// over one mark were both stored and each session waited for a peer that had gone to
/// the other; `PairingBucketTests`).
final class PairingBucket: Sendable {
    private let entries: JetStreamSubjects
    private let names = WriteNames()

    init(jetStream: OpaquePointer, bucket: String) {
        entries = JetStreamSubjects(jetStream: jetStream, bucket: bucket)
    }

    /// Writes `code`'s entry for `session` of `node` unless one is there: `.created`, or
    /// who waits with it. `takingOver`: this node's own entry at that revision, for a session
    /// that no longer waits, is replaced (purged, then written afresh).
    func claim(_ code: [UInt8], node: ClusterNodeID, session: Int, takingOver revision: UInt64? = nil) -> PairingLookup.Entry {
        let key = Hex.encode(code), value = Array("\(node):\(session)".utf8)
        if let revision, !entries.purge(key, through: revision) { return .failed("the cluster did not answer") }
        for _ in 0..<4 {
            switch entries.publish(key, value, after: 0, id: names.next(), stop: { false }) {
            case .revision: return .created
            case .failed: return .failed("the cluster did not answer")
            case .conflict: break
            }
            guard let last = entries.last(key) else { return .failed("the cluster did not answer") }
            guard let last else { continue }    // taken and purged meanwhile: again
            guard !last.deleted, let (owner, other) = Self.owner(last.text) else {
                // A deletion mark (left by an older node) or an entry that is not one: gone,
                // then again.
                entries.purge(key, through: last.revision)
                continue
            }
            if owner == node, other == session { return .created }   // this one, its answer lost
            return .waiting(node: owner, session: other, revision: last.revision)
        }
        return .failed("pairing entry kept changing")
    }

    /// A matched code's entry goes.
    func forget(_ code: [UInt8]) { entries.purge(Hex.encode(code)) }

    /// The entry's node and session ("NODE:SESSION"), nil for anything else.
    static func owner(_ text: String) -> (ClusterNodeID, Int)? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let bytes = Hex.decode(String(parts[0])), bytes.count == ClusterNodeID.byteCount,
              let session = Int(parts[1]) else { return nil }
        return (ClusterNodeID(bytes: bytes), session)
    }
}
