import CNats
import Foundation
import RChatCore
import RChatCrypto
import Synchronization

/// One subject of a JetStream key-value stream as the cluster's buckets use it, by what this
/// server version checks when it stores a write (`TallyBucket`, `PairingBucket`): the last
/// message read from the stream's leader, a publish that expects the subject's last
/// revision (0: no message, which a clustered stream checks as it stores; a revision above 0
/// it checks only before proposing — nats-server issue 4320, up to 2.9.20), sent again with
/// its message id while unanswered, and a purge that leaves no deletion mark.
struct JetStreamSubjects: @unchecked Sendable {
    enum Written: Equatable, Sendable {
        /// Stored: the subject's new revision.
        case revision(UInt64)
        /// The subject's last message is not the revision expected: nothing stored.
        case conflict
        /// NATS refused it, or never answered within `resendFor` (taken as not stored).
        case failed
    }

    struct Last: Sendable {
        let revision: UInt64
        let id: String?
        /// A key-value deletion or purge mark (`KV-Operation`).
        let deleted: Bool
        let text: String
    }

    let jetStream: OpaquePointer
    /// The bucket's stream, and the subject of a key in it (`KV_NAME`, `$KV.NAME.KEY`).
    let stream: String
    private let prefix: String

    init(jetStream: OpaquePointer, bucket: String) {
        self.jetStream = jetStream
        stream = "KV_\(bucket)"
        prefix = "$KV.\(bucket)."
    }

    /// How long an unanswered write is sent again: well within a bucket's duplicates window
    /// (JetStream's default, 2 minutes), so a late second copy is still recognised.
    static let resendFor = 90.0
    /// How long one attempt waits for JetStream's answer.
    static let answerWait: Int64 = 5000

    /// The last message of `key` as the stream's leader has it (a key-value get may be
    /// answered by a replica that lags): nil when the cluster does not answer, .some(nil)
    /// when there is none.
    func last(_ key: String) -> Last?? {
        var msg: OpaquePointer?
        var code = jsErrCode(0)
        let s = js_GetLastMsg(&msg, jetStream, stream, prefix + key, nil, &code)
        if s == NATS_NOT_FOUND || code == JSNoMessageFoundErr { return .some(nil) }
        guard s == NATS_OK, let msg else { return nil }
        defer { natsMsg_Destroy(msg) }
        var value: UnsafePointer<CChar>?
        let deleted = natsMsgHeader_Get(msg, "KV-Operation", &value) == NATS_OK
        let id = natsMsgHeader_Get(msg, "Nats-Msg-Id", &value) == NATS_OK ? value.map { String(cString: $0) } : nil
        let count = Int(natsMsg_GetDataLength(msg))
        let text = natsMsg_GetData(msg).map { String(decoding: UnsafeRawBufferPointer(start: $0, count: count), as: UTF8.self) } ?? ""
        return Last(revision: natsMsg_GetSequence(msg), id: id, deleted: deleted, text: text)
    }

    /// Publishes `data` as `key` if its last message is `revision` (0: none), as the message
    /// `id`, sent again with that id while unanswered.
    func publish(_ key: String, _ data: [UInt8], after revision: UInt64, id: String, stop: () -> Bool) -> Written {
        var resent = false
        return publish(key, data, after: revision, id: id, stop: stop, resent: &resent)
    }

    /// `publish`; `resent` says whether a copy was sent again.
    func publish(_ key: String, _ data: [UInt8], after revision: UInt64, id: String, stop: () -> Bool, resent: inout Bool) -> Written {
        let subject = prefix + key, deadline = Date(timeIntervalSinceNow: Self.resendFor)
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
            resent = true
            Thread.sleep(forTimeInterval: pause)
            pause = min(1, pause * 2)
        }
    }

    /// Removes `key`'s messages up to `through` (nil: all of them), leaving no mark, so that
    /// the next write expecting none is checked as it is stored. Tried a few times; false
    /// when the cluster did not take it.
    @discardableResult
    func purge(_ key: String, through: UInt64? = nil) -> Bool {
        (prefix + key).withCString { cSubject in
            var options = jsOptions()
            jsOptions_Init(&options)
            options.Wait = Self.answerWait
            options.Stream.Purge.Subject = cSubject
            if let through { options.Stream.Purge.Sequence = through + 1 }
            for _ in 0..<3 {
                var code = jsErrCode(0)
                let s = js_PurgeStream(jetStream, stream, &options, &code)
                if s == NATS_OK { return true }
                if code != jsErrCode(0) { return false }
            }
            return false
        }
    }
}

/// Names for one process's writes (`HEX.N`): a publish's message id, so that a copy sent
/// again is recognised; `writer` alone marks what this process holds (a tally's lock).
final class WriteNames: Sendable {
    let writer = Hex.encode(Random.bytes(8))
    private let count = Atomic<UInt64>(0)

    func next() -> String { "\(writer).\(count.add(1, ordering: .relaxed).newValue)" }
}
