import CNats
import Foundation
import RChatCore
import RChatCrypto
import Synchronization

/// The `rchat-held` bucket as `ClusterTallies` reads and writes it, so that a tally is
/// never counted twice nor read stale:
/// - a read asks the stream's leader (`js_GetLastMsg`), never a replica: a key-value get
///   may be answered by a follower that has not applied the last write yet, and a
///   compare-and-set on that revision fails again and again while it lags;
/// - a write is a compare-and-set publish with its own message id: when NATS does not
///   answer (a timeout, a reconnect), the same publish is sent again with the same id, so
///   JetStream stores it at most once (its duplicates window) and the answer says whether
///   it was stored, instead of a second write counting the same batch again.
final class TallyBucket: @unchecked Sendable {
    enum Written: Equatable, Sendable {
        /// Stored: the entry's new revision.
        case revision(UInt64)
        /// The entry changed since the revision written after: nothing stored.
        case conflict
        /// NATS refused it, or never answered within `resendFor` (taken as not stored).
        case failed
    }

    private let jetStream: OpaquePointer
    private let stream: String
    private let subjectPrefix: String
    /// This process's writes are named `writer.N`.
    private let writer = Hex.encode(Random.bytes(8))
    private let writes = Atomic<UInt64>(0)
    /// How long an unanswered write is sent again: well within the bucket's duplicates
    /// window (JetStream's default, 2 minutes), so a late second copy is still recognised.
    static let resendFor = 90.0
    /// How long one attempt waits for JetStream's answer.
    static let answerWait: Int64 = 5000

    init(jetStream: OpaquePointer, bucket: String) {
        self.jetStream = jetStream
        stream = "KV_\(bucket)"
        subjectPrefix = "$KV.\(bucket)."
    }

    /// The entry and its revision, as the stream's leader has it; a missing key (or one
    /// that is not a tally, or a deletion mark) as a fresh tally at its revision (0 when
    /// missing); nil when the cluster does not answer.
    func read(_ key: String) -> (tally: HeldTally, revision: UInt64)? {
        var msg: OpaquePointer?
        var code = jsErrCode(0)
        let s = js_GetLastMsg(&msg, jetStream, stream, subjectPrefix + key, nil, &code)
        if s == NATS_NOT_FOUND || code == JSNoMessageFoundErr { return (HeldTally(), 0) }
        guard s == NATS_OK, let msg else { return nil }
        defer { natsMsg_Destroy(msg) }
        let revision = natsMsg_GetSequence(msg)
        var operation: UnsafePointer<CChar>?
        if natsMsgHeader_Get(msg, "KV-Operation", &operation) == NATS_OK { return (HeldTally(), revision) }
        let count = Int(natsMsg_GetDataLength(msg))
        let text = natsMsg_GetData(msg).map { String(decoding: UnsafeRawBufferPointer(start: $0, count: count), as: UTF8.self) } ?? ""
        return (HeldTally(encoded: text) ?? HeldTally(), revision)
    }

    /// The bucket's duplicates window in seconds, as its stream is configured (nil when the
    /// cluster does not answer): `resendFor` must stay within it.
    func duplicatesWindow() -> Double? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        guard js_GetStreamInfo(&info, jetStream, stream, nil, &code) == NATS_OK, let info else { return nil }
        defer { jsStreamInfo_Destroy(info) }
        return info.pointee.Config.map { Double($0.pointee.Duplicates) / 1_000_000_000 }
    }

    /// Writes `tally` if the entry is still at `revision` (0: no entry). An unanswered
    /// attempt is sent again with the same id until answered, `resendFor` passed, or
    /// `stop()` says the node is closing.
    func write(_ key: String, _ tally: HeldTally, after revision: UInt64, stop: () -> Bool) -> Written {
        write(key, tally, after: revision, id: "\(writer).\(writes.add(1, ordering: .relaxed).newValue)", stop: stop)
    }

    /// `write`, as the publish named `id` (a test sends one twice, as an unanswered one is).
    func write(_ key: String, _ tally: HeldTally, after revision: UInt64, id: String, stop: () -> Bool) -> Written {
        let subject = subjectPrefix + key
        let data = Array(tally.encoded.utf8)
        let deadline = Date(timeIntervalSinceNow: Self.resendFor)
        var pause = 0.05
        while true {
            var ack: UnsafeMutablePointer<jsPubAck>?
            var code = jsErrCode(0)
            let s = id.withCString { cID -> natsStatus in
                var options = jsPubOptions()
                jsPubOptions_Init(&options)
                options.MsgId = cID
                options.MaxWait = Self.answerWait
                if revision == 0 { options.ExpectNoMessage = true } else { options.ExpectLastSubjectSeq = revision }
                return data.withUnsafeBytes { js_Publish(&ack, jetStream, subject, $0.baseAddress, Int32($0.count), &options, &code) }
            }
            if s == NATS_OK, let ack {
                defer { jsPubAck_Destroy(ack) }
                return .revision(ack.pointee.Sequence)
            }
            if code == JSStreamWrongLastSequenceErr { return .conflict }
            // Answered with a refusal, or heard by no server: not stored.
            if code != jsErrCode(0) || s == NATS_NO_RESPONDERS { return .failed }
            // No answer: stored or not, the same publish again tells (a copy already
            // stored is answered as a duplicate, with its revision).
            guard !stop(), Date() < deadline else { return .failed }
            Thread.sleep(forTimeInterval: pause)
            pause = min(1, pause * 2)
        }
    }
}
