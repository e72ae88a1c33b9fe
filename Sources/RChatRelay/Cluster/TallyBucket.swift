import CNats
import Foundation

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
    private let tallies: JetStreamSubjects
    private let locks: JetStreamSubjects
    private let names = WriteNames()
    static let resendFor = JetStreamSubjects.resendFor
    /// The locks bucket's TTL: a lock outlives every write sent under it, and a node that
    /// died holding one keeps that tally from other nodes' writes no longer than this.
    static let lockHeldAtMost = resendFor + 30

    init(jetStream: OpaquePointer, bucket: String, locks: String) {
        self.jetStream = jetStream
        tallies = JetStreamSubjects(jetStream: jetStream, bucket: bucket)
        self.locks = JetStreamSubjects(jetStream: jetStream, bucket: locks)
    }

    /// The entry and its revision, as the stream's leader has it; a missing key (or one
    /// that is not a tally, or a deletion mark) as a fresh tally at its revision (0 when
    /// missing); nil when the cluster does not answer.
    func read(_ key: String) -> (tally: HeldTally, revision: UInt64)? {
        guard let last = tallies.last(key) else { return nil }
        guard let last, !last.deleted else { return (HeldTally(), last?.revision ?? 0) }
        return (HeldTally(encoded: last.text) ?? HeldTally(), last.revision)
    }

    /// The bucket's duplicates window in seconds, as its stream is configured (nil when the
    /// cluster does not answer): `resendFor` must stay within it.
    func duplicatesWindow() -> Double? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        guard js_GetStreamInfo(&info, jetStream, tallies.stream, nil, &code) == NATS_OK, let info else { return nil }
        defer { jsStreamInfo_Destroy(info) }
        return info.pointee.Config.map { Double($0.pointee.Duplicates) / 1_000_000_000 }
    }

    /// Writes `tally` if the entry is still at `revision` (0: no entry), under the tally's
    /// lock when `revision` is above 0. An unanswered attempt is sent again with the same id
    /// until answered, `resendFor` passed, or `stop()` says the node is closing.
    func write(_ key: String, _ tally: HeldTally, after revision: UInt64, stop: () -> Bool) -> Written {
        write(key, tally, after: revision, id: names.next(), stop: stop)
    }

    /// `write`, as the publish named `id`; `sentBefore`: a copy of it may be stored already
    /// (a test sends one twice, as an unanswered one is sent again).
    func write(_ key: String, _ tally: HeldTally, after revision: UInt64, id: String, sentBefore: Bool = false, stop: () -> Bool) -> Written {
        let data = Array(tally.encoded.utf8)
        // No entry yet: JetStream checks "none" as it stores, so only one first write is.
        guard revision > 0 else { return tallies.publish(key, data, after: 0, id: id, stop: stop) }
        let lock: UInt64
        switch locks.publish(key, Array(names.writer.utf8), after: 0, id: id + ".lock", stop: stop) {
        case .revision(let sequence): lock = sequence
        case .failed: return .failed
        case .conflict:
            // Another node writes it now, unless the lock is this process's own: taken by a
            // copy of this write whose answer was lost, or left by an earlier write of this
            // node that could not delete it (one write of a tally at a time on a node).
            guard let held = locks.last(key), let held, held.text == names.writer else { return .conflict }
            lock = held.revision
        }
        // Given back at once: purged (a key-value stream denies deleting one message), that
        // one and none taken after it; else it expires with the bucket's TTL.
        defer { locks.purge(key, through: lock) }
        var resent = sentBefore
        let written = tallies.publish(key, data, after: revision, id: id, stop: stop, resent: &resent)
        // A copy sent again found the first one stored.
        guard written == .conflict, resent, let now = tallies.last(key), let now, now.id == id else { return written }
        return .revision(now.revision)
    }
}
