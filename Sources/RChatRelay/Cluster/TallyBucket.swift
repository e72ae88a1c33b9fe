import CNats
import Foundation
import RChatCore
import RChatCrypto
import Synchronization

/// The `rchat-held` bucket as `ClusterTallies` reads and writes it, so that a tally is
/// never counted twice nor read stale, and two nodes' writes never both land on one revision:
/// - a read asks the stream's leader (`js_GetLastMsg`), never a replica: a key-value get
///   may be answered by a follower that has not applied the last write yet, and a
///   compare-and-set on that revision fails again and again while it lags;
/// - a write on a revision holds the tally's lock while it is sent: an entry in the
///   `rchat-held-locks` bucket made only where none is (`Nats-Expected-Last-Subject-Sequence`
///   0, which a clustered stream checks as it stores, in order), purged once the write is
///   answered, gone by itself after `lockHeldAtMost` if its node died meanwhile. A clustered
///   stream checks a revision above 0 only before it proposes the write, against what it
///   has stored so far, not as it stores it (nats-server up to 2.9.20, Debian's 2.9.10
///   among them: nats-server issue 4320), so without the lock two nodes writing on one
///   revision at once were both stored and the later wiped what the first counted
///   (`ClusteredTallyBucketTests`: 41 of 100 and 95 of 200 such pairs). A first write (no
///   entry yet) expects 0 itself and needs no lock;
/// - a write is a publish with its own message id: when NATS does not answer (a timeout, a
///   reconnect), the same publish is sent again with the same id, so JetStream stores it
///   at most once (its duplicates window). A clustered stream refuses a copy sent again on
///   a revision as a conflict when the first was stored (it checks the revision before the
///   id): under the lock no other node wrote, so the entry then carrying this write's id
///   says it was stored, instead of the batch being counted again on top of itself.
final class TallyBucket: @unchecked Sendable {
    /// `.conflict` also when another node is writing the tally (holds its lock).
    typealias Written = JetStreamSubjects.Written

    private let jetStream: OpaquePointer
    private let subjects: JetStreamSubjects
    private let stream: String
    private let subjectPrefix: String
    private let lockStream: String
    private let lockPrefix: String
    /// This process's writes are named `writer.N`.
    private let writer = Hex.encode(Random.bytes(8))
    private let writes = Atomic<UInt64>(0)
    static let resendFor = JetStreamSubjects.resendFor
    /// The locks bucket's TTL: a lock outlives every write sent under it, and a node that
    /// died holding one keeps that tally from other nodes' writes no longer than this.
    static let lockHeldAtMost = resendFor + 30

    init(jetStream: OpaquePointer, bucket: String, locks: String) {
        self.jetStream = jetStream
        subjects = JetStreamSubjects(jetStream: jetStream)
        stream = "KV_\(bucket)"
        subjectPrefix = "$KV.\(bucket)."
        lockStream = "KV_\(locks)"
        lockPrefix = "$KV.\(locks)."
    }

    /// The entry and its revision, as the stream's leader has it; a missing key (or one
    /// that is not a tally, or a deletion mark) as a fresh tally at its revision (0 when
    /// missing); nil when the cluster does not answer.
    func read(_ key: String) -> (tally: HeldTally, revision: UInt64)? {
        guard let last = lastMessage(stream, subjectPrefix + key) else { return nil }
        guard let last, !last.deleted else { return (HeldTally(), last?.revision ?? 0) }
        return (HeldTally(encoded: last.text) ?? HeldTally(), last.revision)
    }

    private func lastMessage(_ stream: String, _ subject: String) -> JetStreamSubjects.Last?? { subjects.last(stream, subject) }

    /// The bucket's duplicates window in seconds, as its stream is configured (nil when the
    /// cluster does not answer): `resendFor` must stay within it.
    func duplicatesWindow() -> Double? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        guard js_GetStreamInfo(&info, jetStream, stream, nil, &code) == NATS_OK, let info else { return nil }
        defer { jsStreamInfo_Destroy(info) }
        return info.pointee.Config.map { Double($0.pointee.Duplicates) / 1_000_000_000 }
    }

    /// Writes `tally` if the entry is still at `revision` (0: no entry), under the tally's
    /// lock when `revision` is above 0. An unanswered attempt is sent again with the same id
    /// until answered, `resendFor` passed, or `stop()` says the node is closing.
    func write(_ key: String, _ tally: HeldTally, after revision: UInt64, stop: () -> Bool) -> Written {
        write(key, tally, after: revision, id: "\(writer).\(writes.add(1, ordering: .relaxed).newValue)", stop: stop)
    }

    /// `write`, as the publish named `id`; `sentBefore`: a copy of it may be stored already
    /// (a test sends one twice, as an unanswered one is sent again).
    func write(_ key: String, _ tally: HeldTally, after revision: UInt64, id: String, sentBefore: Bool = false, stop: () -> Bool) -> Written {
        let subject = subjectPrefix + key, data = Array(tally.encoded.utf8)
        // No entry yet: JetStream checks "none" as it stores, so only one first write is.
        guard revision > 0 else { return publish(subject, data, after: 0, id: id, stop: stop) }
        let lock: UInt64
        switch publish(lockPrefix + key, Array(writer.utf8), after: 0, id: id + ".lock", stop: stop) {
        case .revision(let sequence): lock = sequence
        case .failed: return .failed
        case .conflict:
            // Another node writes it now, unless the lock is this process's own: taken by a
            // copy of this write whose answer was lost, or left by an earlier write of this
            // node that could not delete it (one write of a tally at a time on a node).
            guard let held = lastMessage(lockStream, lockPrefix + key), let held, held.text == writer else { return .conflict }
            lock = held.revision
        }
        defer { unlock(key, lock) }
        var resent = sentBefore
        let written = publish(subject, data, after: revision, id: id, stop: stop, resent: &resent)
        // A copy sent again found the first one stored.
        guard written == .conflict, resent, let now = lastMessage(stream, subject), let now, now.id == id else { return written }
        return .revision(now.revision)
    }

    /// Gives the lock at `sequence` on `key` back: purged (a key-value stream denies
    /// deleting one message), that one and none taken after it; else it expires with the
    /// bucket's TTL.
    private func unlock(_ key: String, _ sequence: UInt64) { subjects.purge(lockStream, lockPrefix + key, through: sequence) }

    private func publish(_ subject: String, _ data: [UInt8], after revision: UInt64, id: String, stop: () -> Bool) -> Written {
        var resent = false
        return subjects.publish(subject, data, after: revision, id: id, stop: stop, resent: &resent)
    }

    private func publish(_ subject: String, _ data: [UInt8], after revision: UInt64, id: String, stop: () -> Bool, resent: inout Bool) -> Written {
        subjects.publish(subject, data, after: revision, id: id, stop: stop, resent: &resent)
    }
}
