import CNats
import Dispatch
import Glibc
import RChatCore
import RChatCrypto
import RChatWire
import Synchronization

/// A libnats failure, with the library's own text (and JetStream's error code when there is one).
struct NatsError: Error, CustomStringConvertible {
    let description: String
    /// JetStream is still electing its leaders or meeting its peers (servers just started):
    /// worth a retry.
    let isStarting: Bool

    init(_ what: String, _ status: natsStatus, code: jsErrCode = jsErrCode(0)) {
        isStarting = status == NATS_TIMEOUT || status == NATS_NO_RESPONDERS || code == JSClusterNotAvailErr || code == JSClusterNoPeersErr
        var last = NATS_OK
        let detail = nats_GetLastError(&last).map { String(cString: $0) } ?? ""
        let text = String(cString: natsStatus_GetText(status))
        var line = "\(what): \(text)"
        if !detail.isEmpty, !detail.contains(text) { line += " (\(detail))" }
        if code.rawValue != 0 { line += " [JetStream error \(code.rawValue)]" }
        description = line
    }
}

/// A message libnats handed over, owned until `destroy()`.
struct NatsMessage: @unchecked Sendable {
    let raw: OpaquePointer
    var subject: String { String(cString: natsMsg_GetSubject(raw)) }
    var data: [UInt8] {
        let count = Int(natsMsg_GetDataLength(raw))
        guard count > 0, let base = natsMsg_GetData(raw) else { return [] }
        return base.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }
    func destroy() { natsMsg_Destroy(raw) }
}

/// What the NATS side reports to the relay's loop. libnats calls back on its own threads;
/// each report is posted into `ClusterInbox` and handled on the loop's thread.
enum ClusterEvent: Sendable {
    /// JetStream answered an asynchronous publish (token from `publish`).
    case published(token: UInt64, PublishOutcome)
    /// A session's mailbox reader exists; `pending` frames were held when it started.
    case readerOpened(session: Int, role: ReaderRole, held: HeldCount)
    case readerFailed(session: Int, reason: String)
    /// The next frame of a session's mailbox, oldest first.
    case arrived(session: Int, role: ReaderRole, HeldArrival)
    case connection(up: Bool)
    /// A frame on this node's subject or the nodes' heartbeat subject.
    case node(subject: String, data: [UInt8])
    /// A presented code's pairing entry: created (this session waits), or held by another.
    case pairingEntry(PairingLookup)
    /// The owner of an invite token, looked up for a message request.
    case inviteOwner(session: Int, seq: UInt64, token: InviteToken, payload: [UInt8], owner: MailboxID?)
    /// Frames held for a moved mailbox were published again for the new one.
    case moved(count: Int, failure: String?)
}

/// A mailbox is read by two consumers: what was sent ahead (handed over first), then
/// everything in order (where what was sent ahead is skipped).
enum ReaderRole: Sendable {
    case ahead, all
}

struct HeldCount: Sendable {
    var all: UInt64
    var ahead: UInt64
}

enum PublishOutcome: Sendable {
    case stored(sequence: UInt64)
    case refused(RefusalReason)
    /// Refused before it was published: the mailbox's tally across the cluster had no room
    /// for it (or could not be read), so nothing was counted.
    case overQuota(RefusalReason)
    /// No answer in time: it may be stored or not, so the sender is told neither.
    case unanswered
}

/// One held frame as a mailbox reader got it.
struct HeldArrival: Sendable {
    let sequence: UInt64
    let subject: String
    let data: [UInt8]
    /// Frames of the mailbox after this one, when it was delivered.
    let pendingAfter: UInt64
    /// What it takes of its reader's budget until it is released.
    let units: Int
}

/// The outcome of presenting a code to the cluster's pairing bucket.
struct PairingLookup: Sendable {
    let session: Int
    let code: [UInt8]
    enum Entry: Equatable, Sendable {
        /// This session's entry was written: it waits for its peer, wherever that connects.
        case created
        /// Another node's session waits with this code (the entry's revision, to take it over).
        case waiting(node: ClusterNodeID, session: Int, revision: UInt64)
        case failed(String)
    }
    let entry: Entry
}

/// A relay node's name in the cluster: 8 random bytes, fresh at every start.
struct ClusterNodeID: Hashable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]
    var description: String { Hex.encode(bytes) }
    static let byteCount = 8
}

/// Reports from libnats threads, handed to the loop's thread: appended under a lock, then
/// the loop is woken; the loop takes them all at once at the end of its iteration.
final class ClusterInbox: Sendable {
    private let events = Mutex<[ClusterEvent]>([])
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    func post(_ event: ClusterEvent) {
        events.withLock { $0.append(event) }
        wake()
    }

    func takeAll() -> [ClusterEvent] {
        events.withLock { list in
            let taken = list
            list.removeAll(keepingCapacity: true)
            return taken
        }
    }
}

/// The relay node's connection to NATS: JetStream's stream of held frames (`RCHAT`), the
/// pairing and invite buckets, node subjects, and one ordered consumer per mailbox being
/// handed over. Calls that wait for a server answer run on `requests`, never on the loop's
/// thread; publishes, acknowledgements and deletes are asynchronous.
///
/// Subjects: `rchat.held.m.<mailbox hex>` conversation frames, `rchat.held.a.<hex>` frames
/// sent ahead, `rchat.held.r.<hex>` message requests (each its own per-subject quota);
/// `rchat.node.<node hex>` frames between nodes; `rchat.nodes` heartbeats.
final class ClusterLink: @unchecked Sendable {
    static let stream = "RCHAT"
    static let pairingBucket = "rchat-pairing"
    static let inviteBucket = "rchat-invites"
    static let tallyBucket = "rchat-held"
    /// A tally's lock while a node writes it (`TallyBucket`).
    static let tallyLocksBucket = "rchat-held-locks"

    let inbox: ClusterInbox
    let node: ClusterNodeID
    let replicas: Int
    private let connection: OpaquePointer
    private let jetStream: OpaquePointer
    private let pairing: OpaquePointer
    private let invites: OpaquePointer
    private let held: OpaquePointer
    private let heldLocks: OpaquePointer
    /// Each mailbox's held frames across the cluster: what a frame is published through.
    let tallies: ClusterTallies
    /// The bucket the tallies are kept in.
    let tallyBucket: TallyBucket
    /// The codes waiting for their peers (`PairingBucket`).
    let pairingEntries: PairingBucket
    private let ledger: PublishLedger
    /// Where calls that wait for a server's answer run: a few serial queues, a session's
    /// always on the same one (its readers open and close in order), so that many
    /// connections arriving at once (a node died) do not wait in one line.
    private let requestQueues = (0..<8).map { DispatchQueue(label: "rchat-relay cluster requests \($0)") }
    private func requests(_ key: Int) -> DispatchQueue { requestQueues[abs(key % requestQueues.count)] }
    private var ownSubscriptions: [OpaquePointer] = []
    /// The bytes the stream holds, as last read (`refreshStreamBytes`).
    private let storedBytes = Atomic<Int>(0)
    private let stateQueue = DispatchQueue(label: "rchat-relay cluster stream state")
    private let refreshing = Atomic<Bool>(false)

    /// The servers as `nats://HOST:PORT`. Fails (one line) when none answers or JetStream
    /// cannot keep the stream and buckets.
    /// `tallyNamingKey` hides senders and hosts in the names of the held bucket's keys.
    init(servers: [String], configuration: RelayConfiguration, inbox: ClusterInbox, tallyNamingKey: SecretBytes) throws(NatsError) {
        self.inbox = inbox
        let node = ClusterNodeID(bytes: Random.bytes(ClusterNodeID.byteCount))
        self.node = node
        let replicas = min(3, servers.count)
        self.replicas = replicas
        let ledger = PublishLedger(inbox: inbox)
        self.ledger = ledger
        let box = Unmanaged.passUnretained(inbox).toOpaque()

        var options: OpaquePointer?
        var s = natsOptions_Create(&options)
        guard s == NATS_OK, let options else { throw NatsError("cannot set up the NATS client", s) }
        defer { natsOptions_Destroy(options) }
        let cStrings = servers.map { strdup($0) }
        defer { for p in cStrings { free(p) } }
        var pointers = cStrings.map { UnsafePointer<CChar>($0) }
        s = pointers.withUnsafeMutableBufferPointer { natsOptions_SetServers(options, $0.baseAddress, Int32($0.count)) }
        guard s == NATS_OK else { throw NatsError("--cluster \(servers.joined(separator: ","))", s) }
        _ = natsOptions_SetName(options, "rchat-relay \(node)")
        // The servers in the order given: an operator spreads nodes by listing a different
        // server first for each.
        _ = natsOptions_SetNoRandomize(options, true)
        _ = natsOptions_SetTimeout(options, 2000)
        _ = natsOptions_SetMaxReconnect(options, -1)
        _ = natsOptions_SetReconnectWait(options, 250)
        _ = natsOptions_SetPingInterval(options, 2000)
        _ = natsOptions_SetMaxPingsOut(options, 2)
        _ = natsOptions_SetDisconnectedCB(options, { _, closure in
            Unmanaged<ClusterInbox>.fromOpaque(closure!).takeUnretainedValue().post(.connection(up: false))
        }, box)
        _ = natsOptions_SetReconnectedCB(options, { _, closure in
            Unmanaged<ClusterInbox>.fromOpaque(closure!).takeUnretainedValue().post(.connection(up: true))
        }, box)
        var nc: OpaquePointer?
        s = natsConnection_Connect(&nc, options)
        guard s == NATS_OK, let nc else { throw NatsError("cannot reach the cluster at \(servers.joined(separator: ","))", s) }
        connection = nc

        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = 5000
        jsOptions.PublishAsync.MaxPending = 65_536
        jsOptions.PublishAsync.AckHandler = { _, msg, ack, failure, closure in
            Unmanaged<PublishLedger>.fromOpaque(closure!).takeUnretainedValue().answered(msg, ack: ack, failure: failure)
        }
        jsOptions.PublishAsync.AckHandlerClosure = Unmanaged.passUnretained(ledger).toOpaque()
        var js: OpaquePointer?
        s = natsConnection_JetStream(&js, nc, &jsOptions)
        guard s == NATS_OK, let js else {
            natsConnection_Destroy(nc)
            throw NatsError("cannot use JetStream", s)
        }
        jetStream = js
        do {
            try Self.whileJetStreamStarts { () throws(NatsError) in try Self.ensureStream(js, configuration: configuration, replicas: replicas) }
            pairing = try Self.bucket(js, name: Self.pairingBucket, ttlSeconds: configuration.pairingTimeout, replicas: replicas)
            // An invite not registered again within the expiry goes (a node re-registers
            // those of its connected mailboxes in time: `Relay.sweepInvites`).
            invites = try Self.bucket(js, name: Self.inviteBucket, ttlSeconds: Double(configuration.inviteExpirySeconds), replicas: replicas)
            held = try Self.bucket(js, name: Self.tallyBucket, ttlSeconds: Double(configuration.holdSeconds), replicas: replicas)
            heldLocks = try Self.bucket(js, name: Self.tallyLocksBucket, ttlSeconds: TallyBucket.lockHeldAtMost, replicas: replicas)
        } catch {
            jsCtx_Destroy(js)
            natsConnection_Destroy(nc)
            throw error
        }
        let context = SubscriptionBox(raw: js)
        tallyBucket = TallyBucket(jetStream: js, bucket: Self.tallyBucket, locks: Self.tallyLocksBucket)
        pairingEntries = PairingBucket(jetStream: js, bucket: Self.pairingBucket)
        tallies = ClusterTallies(bucket: tallyBucket, limits: HeldLimits(configuration), namingKey: tallyNamingKey, publish: { hold in
            Self.publish(context.raw, ledger, subject: hold.subject, data: hold.data, token: hold.token)
        }, answer: { token, outcome in inbox.post(.published(token: token, outcome)) })
        try subscribeNodeSubjects()
    }

    private func subscribeNodeSubjects() throws(NatsError) {
        let box = Unmanaged.passUnretained(inbox).toOpaque()
        for subject in ["rchat.node.\(node)", "rchat.nodes"] {
            var sub: OpaquePointer?
            let s = natsConnection_Subscribe(&sub, connection, subject, { _, _, msg, closure in
                let message = NatsMessage(raw: msg!)
                Unmanaged<ClusterInbox>.fromOpaque(closure!).takeUnretainedValue().post(.node(subject: message.subject, data: message.data))
                message.destroy()
            }, box)
            guard s == NATS_OK, let sub else { throw NatsError("cannot subscribe to \(subject)", s) }
            ownSubscriptions.append(sub)
        }
        var sub: OpaquePointer?
        let s = natsConnection_Subscribe(&sub, connection, deleteReplies, { _, _, msg, closure in
            let message = NatsMessage(raw: msg!)
            let ledger = Unmanaged<PublishLedger>.fromOpaque(closure!).takeUnretainedValue()
            if !String(decoding: message.data, as: UTF8.self).contains("\"success\":true") { ledger.deletesFailed.add(1, ordering: .relaxed) }
            message.destroy()
        }, Unmanaged.passUnretained(ledger).toOpaque())
        guard s == NATS_OK, let sub else { throw NatsError("cannot subscribe to \(deleteReplies)", s) }
        ownSubscriptions.append(sub)
        _ = natsConnection_FlushTimeout(connection, 2000)
    }

    private var deleteReplies: String { "_INBOX.rchat.\(node).deleted" }

    /// Servers started together take a few seconds to elect JetStream's leaders and meet
    /// their peers: until then its answers time out or say it is not available (or that no
    /// peers can hold the replicas), and `body` is tried again, for up to 15 s. Any other
    /// failure is final at once.
    private static func whileJetStreamStarts(_ body: () throws(NatsError) -> Void) throws(NatsError) {
        let deadline = nats_Now() + 15_000
        while true {
            do {
                return try body()
            } catch {
                guard error.isStarting, nats_Now() < deadline else { throw error }
                nats_Sleep(250)
            }
        }
    }

    /// The stream of held frames: file storage, `replicas` copies, MaxAge the hold, a
    /// per-subject limit with discard-new as the quota, and the relay's byte budget.
    private static func ensureStream(_ js: OpaquePointer, configuration: RelayConfiguration, replicas: Int) throws(NatsError) {
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        let subjectNames: [String] = ["rchat.held.*.*"]
        let subjects = subjectNames.map { strdup($0)! }
        defer { for p in subjects { free(p) } }
        let name = strdup(stream)
        defer { free(name) }
        var status = NATS_OK
        var code = jsErrCode(0)
        var subjectPointers: [UnsafePointer<CChar>?] = subjects.map { UnsafePointer($0) }
        subjectPointers.withUnsafeMutableBufferPointer { list in
            config.Name = UnsafePointer(name)
            config.Subjects = list.baseAddress
            config.SubjectsLen = Int32(list.count)
            config.Retention = js_LimitsPolicy
            config.Storage = js_FileStorage
            config.Replicas = Int64(replicas)
            config.MaxAge = configuration.holdSeconds * 1_000_000_000
            config.MaxMsgsPerSubject = Int64(configuration.quota)
            config.MaxBytes = Int64(configuration.maxHeldBytes + liveRoom(configuration))
            config.MaxMsgSize = Int32(RelayProtocol.maximumFrameBytes + 512)
            config.Discard = js_DiscardNew
            config.DiscardNewPerSubject = true
            config.AllowDirect = true
            // A short wait: while JetStream elects its leaders the request goes unanswered.
            var options = jsOptions()
            jsOptions_Init(&options)
            options.Wait = 1000
            status = js_AddStream(nil, js, &config, &options, &code)
            if status != NATS_OK, code == JSStreamNameExistErr {
                // Made by another node, or before: take this node's limits.
                code = jsErrCode(0)
                status = js_UpdateStream(nil, js, &config, &options, &code)
            }
        }
        guard status == NATS_OK else { throw NatsError("cannot keep the JetStream stream \(stream)", status, code: code) }
    }

    /// Room the stream keeps beyond `--max-held-bytes` for frames to connected recipients
    /// (a quarter of it): a node refuses other frames once the stream holds
    /// `--max-held-bytes` (`streamBytes`, read every heartbeat), so live chat goes on when
    /// strangers filled the rest; JetStream's own limit is the hard one.
    static func liveRoom(_ configuration: RelayConfiguration) -> Int { configuration.maxHeldBytes / 4 }

    /// What the stream holds, as last read.
    var streamBytes: Int { storedBytes.load(ordering: .relaxed) }

    /// Reads what the stream holds again, off the loop's thread.
    func refreshStreamBytes() {
        // One at a time: while NATS does not answer, reads do not pile up behind each other.
        guard refreshing.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        stateQueue.async { [self] in
            defer { refreshing.store(false, ordering: .releasing) }
            var info: UnsafeMutablePointer<jsStreamInfo>?
            var code = jsErrCode(0)
            guard js_GetStreamInfo(&info, jetStream, Self.stream, nil, &code) == NATS_OK, let info else { return }
            storedBytes.store(Int(clamping: info.pointee.State.Bytes), ordering: .relaxed)
            jsStreamInfo_Destroy(info)
        }
    }

    private static func bucket(_ js: OpaquePointer, name: String, ttlSeconds: Double?, replicas: Int) throws(NatsError) -> OpaquePointer {
        var kv: OpaquePointer?
        if js_KeyValue(&kv, js, name) == NATS_OK, let kv {
            try keepTTL(js, bucket: name, ttlSeconds: ttlSeconds)
            return kv
        }
        var config = kvConfig()
        kvConfig_Init(&config)
        let cName = strdup(name)
        defer { free(cName) }
        config.Bucket = UnsafePointer(cName)
        config.History = 1
        config.Replicas = Int32(replicas)
        config.StorageType = js_FileStorage
        if let ttlSeconds { config.TTL = Int64(ttlSeconds * 1_000_000_000) }
        let created = js_CreateKeyValue(&kv, js, &config)
        if created == NATS_OK, let kv { return kv }
        let failure = NatsError("cannot keep the JetStream bucket \(name)", created)
        // Two nodes starting together: the other made it first.
        guard js_KeyValue(&kv, js, name) == NATS_OK, let kv else { throw failure }
        return kv
    }

    /// A bucket made before (by an older node, or with another expiry) takes this node's TTL.
    private static func keepTTL(_ js: OpaquePointer, bucket name: String, ttlSeconds: Double?) throws(NatsError) {
        let wanted = ttlSeconds.map { Int64($0 * 1_000_000_000) } ?? 0
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        var s = js_GetStreamInfo(&info, js, "KV_\(name)", nil, &code)
        guard s == NATS_OK, let info else { throw NatsError("cannot read the JetStream bucket \(name)", s, code: code) }
        defer { jsStreamInfo_Destroy(info) }
        guard let config = info.pointee.Config, config.pointee.MaxAge != wanted else { return }
        config.pointee.MaxAge = wanted
        var updated: UnsafeMutablePointer<jsStreamInfo>?
        s = js_UpdateStream(&updated, js, config, nil, &code)
        guard s == NATS_OK else { throw NatsError("cannot set the TTL of the JetStream bucket \(name)", s, code: code) }
        if let updated { jsStreamInfo_Destroy(updated) }
    }

    // MARK: held frames

    /// Publishes one sealed frame; `inbox` gets `.published(token, …)` once JetStream
    /// stored it on a quorum of its servers, or refused it.
    private static func publish(_ jetStream: OpaquePointer, _ ledger: PublishLedger, subject: String, data: [UInt8], token: UInt64) -> PublishOutcome? {
        var msg: OpaquePointer?
        var s = data.withUnsafeBufferPointer { natsMsg_Create(&msg, subject, nil, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32($0.count)) }
        guard s == NATS_OK, let created = msg else { return .refused(.clusterUnavailable) }
        let key = UInt(bitPattern: created)
        ledger.pending.withLock { $0[key] = token }
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = Self.publishWait
        s = js_PublishMsgAsync(jetStream, &msg, &options)
        guard s == NATS_OK else {
            ledger.pending.withLock { $0[key] = nil }
            if let msg { natsMsg_Destroy(msg) }
            return .refused(.clusterUnavailable)
        }
        return nil
    }

    /// How long a publish waits for JetStream's answer (milliseconds); without one the
    /// sender hears nothing (it may have been stored), and sends again after its own timeout.
    static let publishWait: Int64 = 10_000

    /// JetStream's refusal as the protocol's reason: a full mailbox (the per-subject limit),
    /// the stream's byte budget, or anything else (no quorum, no leader) as unavailable.
    static func refusal(for text: String) -> RefusalReason {
        if text.contains("maximum messages per subject") { return .quotaExceeded }
        if text.contains("maximum bytes") || text.contains("maximum messages exceeded") || text.contains("insufficient resources") { return .relayFull }
        if text.contains("message size exceeds") { return .tooLarge }
        return .clusterUnavailable
    }

    /// Deletes a handed-over frame the client acknowledged (answered on `deleteReplies`).
    func delete(sequence: UInt64) {
        let body = "{\"seq\":\(sequence),\"no_erase\":true}"
        _ = natsConnection_PublishRequestString(connection, "$JS.API.STREAM.MSG.DELETE.\(Self.stream)", deleteReplies, body)
    }

    var failedDeletes: Int { ledger.deletesFailed.load(ordering: .relaxed) }

    // MARK: mailbox readers

    /// Starts an ordered consumer over `mailbox`'s subjects of `role`, oldest first, for
    /// `session`: `.readerOpened` (with what they held then), then `.arrived` for each
    /// frame, at most `budget` units (`MailboxReader.cost`) ahead of `release`.
    func openReader(for mailbox: MailboxID, role: ReaderRole, session: Int, budget: Int) -> MailboxReader {
        let reader = MailboxReader(session: session, role: role, budget: budget, inbox: inbox)
        let subject = "rchat.held.\(role == .ahead ? "a" : "*").\(mailbox.hex)"
        requests(session).async { [self] in
            let pending = heldCount(mailbox)
            var options = jsSubOptions()
            jsSubOptions_Init(&options)
            options.Ordered = true
            options.Config.DeliverPolicy = js_DeliverAll
            options.Config.Heartbeat = 1_000_000_000
            var sub: OpaquePointer?
            var code = jsErrCode(0)
            let closure = Unmanaged.passRetained(reader).toOpaque()
            let s = Self.stream.withCString { streamName -> natsStatus in
                options.Stream = streamName
                return js_Subscribe(&sub, jetStream, subject, { _, _, msg, closure in
                    Unmanaged<MailboxReader>.fromOpaque(closure!).takeUnretainedValue().arrived(NatsMessage(raw: msg!))
                }, closure, nil, &options, &code)
            }
            guard s == NATS_OK, let sub else {
                Unmanaged<MailboxReader>.fromOpaque(closure).release()
                inbox.post(.readerFailed(session: session, reason: NatsError("cannot read the mailbox", s, code: code).description))
                return
            }
            // The reader is released once the subscription is done with it.
            _ = natsSubscription_SetOnCompleteCB(sub, { closure in
                Unmanaged<MailboxReader>.fromOpaque(closure!).release()
            }, closure)
            if !reader.attach(sub) {
                // Closed while it was being made.
                _ = natsSubscription_Unsubscribe(sub)
                natsSubscription_Destroy(sub)
                return
            }
            inbox.post(.readerOpened(session: session, role: role, held: pending))
        }
        return reader
    }

    /// Frames held for `mailbox`, and of them those sent ahead (0 when JetStream does not say).
    private func heldCount(_ mailbox: MailboxID) -> HeldCount {
        let filter = "rchat.held.*.\(mailbox.hex)"
        var options = jsOptions()
        jsOptions_Init(&options)
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let s = filter.withCString { cFilter -> natsStatus in
            options.Stream.Info.SubjectsFilter = cFilter
            return js_GetStreamInfo(&info, jetStream, Self.stream, &options, &code)
        }
        guard s == NATS_OK, let info else { return HeldCount(all: 0, ahead: 0) }
        defer { jsStreamInfo_Destroy(info) }
        guard let subjects = info.pointee.State.Subjects, let list = subjects.pointee.List else { return HeldCount(all: 0, ahead: 0) }
        var count = HeldCount(all: 0, ahead: 0)
        for i in 0..<Int(subjects.pointee.Count) {
            count.all += list[i].Msgs
            if let subject = list[i].Subject, ClusterNode.parse(subject: String(cString: subject))?.0 == .ahead { count.ahead += list[i].Msgs }
        }
        return count
    }

    /// Stops a reader: its consumer is deleted off the loop's thread.
    func closeReader(_ reader: MailboxReader) {
        guard let sub = reader.close() else { return }
        let box = SubscriptionBox(raw: sub)
        requests(reader.session).async {
            _ = natsSubscription_Unsubscribe(box.raw)
            natsSubscription_Destroy(box.raw)
        }
    }

    // MARK: nodes

    func send(toNode node: ClusterNodeID, _ body: [UInt8]) { publishCore("rchat.node.\(node)", body) }
    func heartbeat(_ body: [UInt8]) { publishCore("rchat.nodes", body) }

    private func publishCore(_ subject: String, _ body: [UInt8]) {
        _ = body.withUnsafeBytes { natsConnection_Publish(connection, subject, $0.baseAddress, Int32($0.count)) }
    }

    // MARK: pairing and invites (buckets)

    /// Writes `code`'s entry for this node's `session` unless one exists; reports which.
    func presentCode(_ code: [UInt8], session: Int, takingOverRevision revision: UInt64? = nil) {
        requests(session).async { [self] in
            let entry = pairingEntries.claim(code, node: node, session: session, takingOver: revision)
            inbox.post(.pairingEntry(PairingLookup(session: session, code: code, entry: entry)))
        }
    }

    /// Removes a matched code's entry.
    func forgetCode(_ code: [UInt8]) {
        requests(Hex.encode(code).hashValue).async { [self] in pairingEntries.forget(code) }
    }

    func registerInvite(_ token: InviteToken, for mailbox: MailboxID?) {
        let key = Hex.encode(token.bytes)
        requests(key.hashValue).async { [self] in
            if let mailbox { _ = kvStore_PutString(nil, invites, key, mailbox.hex) } else { _ = kvStore_Delete(invites, key) }
        }
    }

    func lookUpInvite(_ token: InviteToken, session: Int, seq: UInt64, payload: [UInt8]) {
        let key = Hex.encode(token.bytes)
        requests(session).async { [self] in
            // From the stream's leader: a replica may not have an invite registered a moment ago.
            var owner: MailboxID?
            if let last = JetStreamSubjects(jetStream: jetStream, bucket: Self.inviteBucket).last(key), let last, !last.deleted {
                owner = Hex.decode(last.text).flatMap(MailboxID.init(bytes:))
            }
            inbox.post(.inviteOwner(session: session, seq: seq, token: token, payload: payload, owner: owner))
        }
    }

    /// Publishes again, for `new`, every frame held for `old` (each re-sealed by `reseal`),
    /// and deletes the old ones once JetStream took the new; off the loop's thread.
    func move(from old: MailboxID, reseal: @escaping @Sendable (_ subject: String, _ data: [UInt8]) -> (subject: String, data: [UInt8])?) {
        requests(old.hashValue).async { [self] in
            var options = jsSubOptions()
            jsSubOptions_Init(&options)
            options.Ordered = true
            var sub: OpaquePointer?
            var code = jsErrCode(0)
            let s = js_SubscribeSync(&sub, jetStream, "rchat.held.*.\(old.hex)", nil, &options, &code)
            guard s == NATS_OK, let sub else { return inbox.post(.moved(count: 0, failure: NatsError("mailbox move", s, code: code).description)) }
            defer { _ = natsSubscription_Unsubscribe(sub); natsSubscription_Destroy(sub) }
            var moved = 0
            var failure: String?
            while true {
                var msg: OpaquePointer?
                guard natsSubscription_NextMsg(&msg, sub, 500) == NATS_OK, let msg else { break }
                let message = NatsMessage(raw: msg)
                defer { message.destroy() }
                var meta: UnsafeMutablePointer<jsMsgMetaData>?
                guard natsMsg_GetMetaData(&meta, msg) == NATS_OK, let meta else { continue }
                let sequence = meta.pointee.Sequence.Stream, left = meta.pointee.NumPending
                jsMsgMetaData_Destroy(meta)
                if let (subject, data) = reseal(message.subject, message.data) {
                    let p = data.withUnsafeBytes { js_Publish(nil, jetStream, subject, $0.baseAddress, Int32($0.count), nil, &code) }
                    if p != NATS_OK { failure = NatsError("mailbox move", p, code: code).description; break }
                    moved += 1
                }
                _ = js_DeleteMsg(jetStream, Self.stream, sequence, nil, &code)
                if left == 0 { break }
            }
            inbox.post(.moved(count: moved, failure: failure))
        }
    }

    var isConnected: Bool { natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED }

    func close() {
        for sub in ownSubscriptions { natsSubscription_Destroy(sub) }
        for queue in requestQueues { queue.sync {} }
        stateQueue.sync {}
        tallies.finish()
        natsConnection_Close(connection)
        kvStore_Destroy(pairing)
        kvStore_Destroy(invites)
        kvStore_Destroy(held)
        kvStore_Destroy(heldLocks)
        jsCtx_Destroy(jetStream)
        natsConnection_Destroy(connection)
    }
}

private struct SubscriptionBox: @unchecked Sendable { let raw: OpaquePointer }

/// Asynchronous publishes not yet answered (message address → the caller's token), and
/// the deletes JetStream did not confirm; reached from libnats' threads.
private final class PublishLedger: Sendable {
    let pending = Mutex<[UInt: UInt64]>([:])
    let deletesFailed = Atomic<Int>(0)
    let inbox: ClusterInbox

    init(inbox: ClusterInbox) { self.inbox = inbox }

    /// libnats hands the published message back with its answer; this side destroys it.
    func answered(_ msg: OpaquePointer?, ack: UnsafeMutablePointer<jsPubAck>?, failure: UnsafeMutablePointer<jsPubAckErr>?) {
        guard let msg else { return }
        defer { natsMsg_Destroy(msg) }
        guard let token = pending.withLock({ $0.removeValue(forKey: UInt(bitPattern: msg)) }) else { return }
        if let ack {
            inbox.post(.published(token: token, .stored(sequence: ack.pointee.Sequence)))
        } else if failure?.pointee.Err == NATS_TIMEOUT {
            inbox.post(.published(token: token, .unanswered))
        } else {
            let text = failure?.pointee.ErrText.map { String(cString: $0) } ?? ""
            inbox.post(.published(token: token, .refused(ClusterLink.refusal(for: text))))
        }
    }
}

/// One mailbox being handed over: an ordered consumer whose frames go to the loop, never
/// more of them not yet released than its budget allows — a frame costs one unit and one
/// per KiB of it (`cost`), so a backlog of large file chunks is held back as well as one of
/// small messages. The callback waits on libnats' delivery thread for room, and
/// JetStream's flow control holds the rest back on the servers, so a node's memory does
/// not grow with what a mailbox holds.
final class MailboxReader: @unchecked Sendable {
    let session: Int
    let role: ReaderRole
    /// Made at 0 and raised to the budget: libdispatch refuses to dispose of a semaphore
    /// below the value it was made with.
    private let room = DispatchSemaphore(value: 0)
    private let closed = Atomic<Bool>(false)
    private let subscription = Mutex<SubscriptionBox?>(nil)
    private let inbox: ClusterInbox

    init(session: Int, role: ReaderRole, budget: Int, inbox: ClusterInbox) {
        self.session = session
        self.role = role
        self.inbox = inbox
        for _ in 0..<budget { room.signal() }
    }

    /// What a frame of `bytes` takes of a reader's budget.
    static func cost(bytes: Int) -> Int { 1 + bytes / 1024 }

    fileprivate func arrived(_ message: NatsMessage) {
        defer { message.destroy() }
        let data = message.data
        let units = Self.cost(bytes: data.count)
        for _ in 0..<units {
            guard !closed.load(ordering: .acquiring) else { return }
            room.wait()
        }
        guard !closed.load(ordering: .acquiring) else { return }
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message.raw) == NATS_OK, let meta else {
            release(units)
            return
        }
        let arrival = HeldArrival(sequence: meta.pointee.Sequence.Stream, subject: message.subject, data: data,
                                  pendingAfter: meta.pointee.NumPending, units: units)
        jsMsgMetaData_Destroy(meta)
        inbox.post(.arrived(session: session, role: role, arrival))
    }

    /// A frame left the node's hands (acknowledged, or skipped): its units are free again.
    func release(_ units: Int) { for _ in 0..<units { room.signal() } }

    fileprivate func attach(_ sub: OpaquePointer) -> Bool {
        subscription.withLock { current in
            guard !closed.load(ordering: .acquiring) else { return false }
            current = SubscriptionBox(raw: sub)
            return true
        }
    }

    fileprivate func close() -> OpaquePointer? {
        subscription.withLock { current in
            closed.store(true, ordering: .releasing)
            // A delivery thread waiting for room wakes, sees the reader closed, and returns.
            room.signal()
            let sub = current
            current = nil
            return sub?.raw
        }
    }
}
