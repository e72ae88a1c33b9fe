import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine
import RChatNet
import RChatSQL
import RChatStore
import Synchronization

/// `rchat-bench engine`: two accounts talking through a real `rchat-relay` on loopback, each
/// with an `Engine` running in this process (on its own thread), so every figure is timed
/// here with the monotonic clock rather than read from the stored unix seconds.
///
/// (a) Receive throughput, N = `--messages`, Alice's outgoing rows written as `rchat send`
///     writes them but in one transaction. Live: both engines run, timed from the poke that
///     wakes Alice's engine. Held: Bob's engine is stopped while Alice's sends them (the
///     relay holds them); then his starts, timed from its start (connect included). Both
///     to the N-th message durably stored (the engine's `.newMessage` events come only once
///     the commit is on disk) and to every Delivered receipt for them taken by the relay
///     (Bob's contact mark reaches his last message). Reference: 256-byte rows inserted one
///     per transaction in the same directory, same pragmas, same run.
/// (b, c) Latency. Both engines live, Bob's `receipt-window-ms` 0; Alice sends `--paced`
///     messages one at a time, `--interval-ms` apart. From just before `send` to Alice's
///     engine emitting `.statusChanged` Sent (the relay took it) and Delivered (Bob's
///     receipt arrived and was committed at Alice).
struct EngineBenchmark {
    static let messages = Declared.integer("--messages", in: 1...5_000_000, default: 20_000, help: "messages received in a burst")
    static let paced = Declared.integer("--paced", in: 1...1_000_000, default: 500, help: "messages sent one by one for latency")
    static let intervalMilliseconds = Declared.number("--interval-ms", "MS", in: 0...10_000, default: 5, help: "pause between paced sends")
    static let referenceRows = Declared.integer("--reference-rows", in: 1...1_000_000, default: 2_000,
                                                help: "rows the one-per-transaction reference stores")
    static let verbose = Option.flag("--verbose", help: "the engines' logs on stderr")
    static let storeOnly = Option.flag("--store-only", help: "only the store's ceiling, without a relay")
    static let command = BenchmarkCommand(name: "engine", options: [messages.option, paced.option, intervalMilliseconds.option,
                                                                     referenceRows.option, verbose, storeOnly])

    let messages: Int
    let paced: Int
    let intervalMilliseconds: Double
    let referenceRows: Int
    let verbose: Bool
    let storeOnly: Bool
    static let textBytes = 256

    init(arguments: [String]) {
        let options = Self.command.parse(arguments)
        messages = options[Self.messages]
        paced = options[Self.paced]
        intervalMilliseconds = options[Self.intervalMilliseconds]
        referenceRows = options[Self.referenceRows]
        verbose = options.has(Self.verbose)
        storeOnly = options.has(Self.storeOnly)
    }

    func run() {
        NetSetup.ignoreBrokenPipes()
        let relayBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("rchat-relay").path
        let directory = NSTemporaryDirectory() + "rchat-bench-engine-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if storeOnly {
            _ = storeCeiling(directory: directory)
            return
        }
        guard let relay = try? Child(relayBinary, ["--listen", "127.0.0.1:0", "--key-file", directory + "/relay.key",
                                                  "--quota", String(messages + paced + 1000), "--max-held-bytes", String(1 << 34), "--quota-bytes", String(1 << 40)]),
              let line = relay.line(startingWith: "relay "), let address = try? RelayAddress(parsing: String(line.dropFirst(6))) else {
            fail("cannot start \(relayBinary)")
        }
        defer { relay.stop() }
        Self.cleanup.withLock { $0 = (relay.pid, directory) }

        print("rchat-bench engine: two in-process engines through rchat-relay (pid \(relay.pid)) on loopback; \(Self.textBytes)-byte texts; store WAL, synchronous=FULL, in \(directory)")
        let reference = referenceInserts(directory: directory)
        _ = storeCeiling(directory: directory)

        let verbose = self.verbose
        let log: @Sendable (String) -> Void = { line in if verbose { FileHandle.standardError.write(Data("  [\(line)]\n".utf8)) } }
        let alice: AccountService, bob: AccountService, aliceCommands: AccountService, bobReader: Database
        do throws(EngineError) {
            let aliceAt = Locations(home: directory + "/alice", deviceDirectory: directory + "/alice-device")
            let bobAt = Locations(home: directory + "/bob", deviceDirectory: directory + "/bob-device")
            try AccountService.create(at: aliceAt, name: "alice", relay: address)
            try AccountService.create(at: bobAt, name: "bob", relay: address)
            alice = try AccountService(locations: aliceAt)
            bob = try AccountService(locations: bobAt)
            _ = try alice.addContact(try bob.contactCode(), name: "bob")
            _ = try bob.addContact(try alice.contactCode(), name: "alice")
            try bob.setSetting(.receiptWindow, "0")
            // What the engine itself does, not the slots steady traffic spaces frames into (on
            // by default: receipts would wait for a slot's end, a second or two).
            try alice.setSetting(.steadyTraffic, "off")
            try bob.setSetting(.steadyTraffic, "off")
            // `rchat send` is another process with its own connection; so is this.
            aliceCommands = try AccountService(locations: aliceAt)
            guard let db = try? Database(path: bobAt.databasePath) else { fail("cannot open Bob's store for reading") }
            bobReader = db
        } catch {
            fail("cannot set up the accounts: \(error)")
        }

        let aliceEvents = EventRecorder(), bobEvents = EventRecorder()
        let aliceSide = Side(alice, aliceEvents, log: { log("alice: " + $0) })
        let bobSide = Side(bob, bobEvents, log: { log("bob: " + $0) })
        guard aliceSide.start(), bobSide.start() else { fail("cannot start the engines") }
        defer { aliceSide.stop() }

        // A session first: one message there and back.
        guard let warm = try? aliceCommands.send(to: "bob", content: .text(Self.text(0))),
              aliceEvents.wait(timeout: 30, until: { $0.time(warm, .delivered) != nil }) else {
            bobSide.stop()
            fail("no session between the two engines within 30 s (try --verbose)")
        }

        // (b), (c): paced, both live, receipt window 0.
        var sentLatency: [Double] = [], deliveredLatency: [Double] = [], commitLatency: [Double] = []
        var started: [(MessageID, UInt64)] = []
        let interval = UInt64(intervalMilliseconds * 1e6)
        let begin = monotonicNanoseconds()
        for i in 0..<paced {
            let due = begin + UInt64(i) * interval
            let now = monotonicNanoseconds()
            if due > now { usleep(useconds_t((due - now) / 1000)) }
            let t0 = monotonicNanoseconds()
            guard let id = try? aliceCommands.send(to: "bob", content: .text(Self.text(i + 1))) else { continue }
            commitLatency.append(Double(monotonicNanoseconds() - t0) / 1e6)
            started.append((id, t0))
        }
        if let lastPaced = started.last?.0, !aliceEvents.wait(timeout: 30, until: { $0.time(lastPaced, .delivered) != nil }) {
            print("note: not every paced message was Delivered within 30 s")
        }
        for (id, t0) in started {
            if let t = aliceEvents.time(id, .sent) { sentLatency.append(Double(t &- t0) / 1e6) }
            if let t = aliceEvents.time(id, .delivered) { deliveredLatency.append(Double(t &- t0) / 1e6) }
        }
        sentLatency.sort(); deliveredLatency.sort(); commitLatency.sort()

        // (a1) live: N queued at Alice in one transaction, one wake-up; her engine sends them
        // all on the session while Bob's engine receives, stores and receipts them.
        let live = receive(.live, relayPID: relay.pid, alice: aliceSide, aliceCommands: aliceCommands, bob: bobSide, bobReader: bobReader)
        // (a2) held: Bob offline while Alice's engine sends N (the relay holds them); then
        // Bob's engine starts and drains them, Alice's engine taking his receipts meanwhile
        // (receipts travel in a session, and a session needs both sides online).
        let held = receive(.held, relayPID: relay.pid, alice: aliceSide, aliceCommands: aliceCommands, bob: bobSide, bobReader: bobReader)
        bobSide.stop()

        print("")
        print("(a) receive: \(messages) messages of \(Self.textBytes) B, Bob's receipt-window-ms 0, receipt-batch 64 (default), steady-traffic off")
        for (name, r) in [("live", live), ("held", held)] {
            print("  \(name): \(r.note)")
            row("received + stored (msg/s)", r.storeRate, reference, "≥ 50,000/s", detail: r.storeDetail)
            if let rate = r.receiptRate {
                row("received + stored + receipted (msg/s)", rate, reference, "≥ 50,000/s", detail: r.receiptDetail)
            } else {
                print("    receipts: \(r.receiptDetail)")
            }
            print("      (\(r.cpu))")
        }
        print("")
        print("(b, c) latency: \(started.count) messages paced \(intervalMilliseconds) ms apart, both engines live, receipt-window-ms 0")
        print("    send (its own commit)   p50 \(ms(percentile(commitLatency, 0.5)))  p99 \(ms(percentile(commitLatency, 0.99)))  max \(ms(commitLatency.last ?? 0))")
        print("    send→Sent               p50 \(ms(percentile(sentLatency, 0.5)))  p99 \(ms(percentile(sentLatency, 0.99)))  max \(ms(sentLatency.last ?? 0))  (\(sentLatency.count) measured)")
        print("    send→Delivered          p50 \(ms(percentile(deliveredLatency, 0.5)))  p99 \(ms(percentile(deliveredLatency, 0.99)))  max \(ms(deliveredLatency.last ?? 0))  (\(deliveredLatency.count) measured)")
        print("    (from just before AccountService.send to the event of Alice's engine, after its commit)")
    }

    struct ReceiveResult {
        var note = ""
        var storeRate = 0.0
        var storeDetail = ""
        var receiptRate: Double?
        var receiptDetail = ""
        var cpu = ""
    }

    enum ReceiveRun {
        var isLive: Bool { if case .live = self { true } else { false } }

        /// Both engines running throughout.
        case live
        /// Bob's engine stopped while Alice's sends; then his starts and drains the relay.
        case held
    }

    /// One receive run; see the type's comment.
    private func receive(_ run: ReceiveRun, relayPID: Int32, alice: Side, aliceCommands: AccountService, bob: Side, bobReader: Database) -> ReceiveResult {
        var result = ReceiveResult()
        let storedBefore = storedCount(bobReader)
        let newBefore = bob.events.newMessages
        if case .held = run {
            bob.stop()
            usleep(200_000)
        }
        // Queued as `rchat send` would store them, but in one transaction (N separate
        // commits would measure the disk, and the engine's wake-up per send).
        let now = Int64(Date().timeIntervalSince1970)
        let queueStart = monotonicNanoseconds()
        var ids: [MessageID] = []
        ids.reserveCapacity(messages)
        do {
            guard let contact = try aliceCommands.store.contact(named: "bob") else { fail("no contact bob") }
            try aliceCommands.store.transaction { tx in
                for i in 0..<messages {
                    let id = MessageID.random()
                    try tx.insertOutgoing(contact: contact.id, id: id, content: .text(Self.text(i)), at: now)
                    ids.append(id)
                }
            }
        } catch {
            fail("cannot queue: \(error)")
        }
        let lastQueued = ids.last!
        alice.events.watch(only: [lastQueued])  // before her engine hears of them
        WakeSignal.poke(home: aliceCommands.locations.home)
        let drainStart: UInt64
        var cpuBefore = ThreadCPU()
        switch run {
        case .held:
            guard alice.events.wait(timeout: 120, until: { $0.time(lastQueued, .sent) != nil }) else {
                fail("Alice's engine did not get the relay to take \(messages) messages within 120 s")
            }
            let queueSeconds = Double(monotonicNanoseconds() - queueStart) / 1e9
            result.note = String(format: "Bob offline; Alice queued %d and her engine had them all Sent in %.2f s; then Bob's engine starts",
                                 messages, queueSeconds)
            cpuBefore = ThreadCPU.now(child: relayPID)
            drainStart = monotonicNanoseconds()
            guard bob.start() else { fail("cannot restart Bob's engine") }
        case .live:
            cpuBefore = ThreadCPU.now(child: relayPID)
            drainStart = monotonicNanoseconds()
            result.note = String(format: "both engines live; Alice queued %d in one transaction (%.2f s) and poked her engine; timed from the poke", messages, Double(drainStart - queueStart) / 1e9)
        }
        let bobEvents = bob.events
        let target = newBefore + messages
        guard bobEvents.wait(timeout: 300, until: { $0.newMessages >= target }) else {
            fail("Bob stored \(bobEvents.newMessages - newBefore) of \(messages) within 300 s")
        }
        let storedAt = bobEvents.lastNewMessage
        let firstAt = bobEvents.firstNewMessage(after: newBefore)
        // All Delivered receipts taken by the relay: nothing owed at Bob.
        var receiptedAt: UInt64 = 0
        while true {
            if !owesReceipts(bobReader) { receiptedAt = monotonicNanoseconds(); break }
            if Double(monotonicNanoseconds() - storedAt) > 60e9 { break }
            usleep(500)
        }
        let cpu = ThreadCPU.now(child: relayPID).since(cpuBefore, childName: "rchat-relay")
        let wall = Double((receiptedAt > 0 ? receiptedAt : storedAt) - drainStart) / 1e6
        result.cpu = String(format: "CPU until then (ms, on %d cores: %.0f available): ", ProcessInfo.processInfo.activeProcessorCount,
                            wall * Double(ProcessInfo.processInfo.activeProcessorCount))
            + cpu.map { String(format: "%@ %.0f", $0.0, $0.1) }.joined(separator: ", ")
        let storedRows = storedCount(bobReader) - storedBefore
        let storeSeconds = Double(storedAt - drainStart) / 1e9
        result.storeRate = Double(messages) / storeSeconds
        result.storeDetail = String(format: "%.3f s from %@ to the last one stored (durably); %d rows counted in Bob's database; first stored after %.3f s",
                                    storeSeconds, run.isLive ? "the poke" : "Bob's engine start", storedRows,
                                    Double(firstAt &- drainStart) / 1e9)
        if receiptedAt > 0 {
            let seconds = Double(receiptedAt - drainStart) / 1e9
            result.receiptRate = Double(messages) / seconds
            result.receiptDetail = String(format: "%.3f s until Bob owed no Delivered receipt (the relay took them all)", seconds)
        } else {
            result.receiptDetail = "receipts still owed 60 s after the last message was stored"
        }
        if !alice.events.wait(timeout: 60, until: { $0.time(lastQueued, .delivered) != nil }) {
            print("note: Alice's engine did not see the last message Delivered within 60 s")
        }
        return result
    }

    // MARK: reference

    /// 256-byte rows, one INSERT per transaction, WAL with synchronous=FULL, same directory.
    private func referenceInserts(directory: String) -> Double {
        let path = directory + "/reference.db"
        guard let db = try? Database(path: path) else { return 0 }
        defer { db.close() }
        _ = try? db.query("PRAGMA journal_mode = WAL")
        try? db.execute("PRAGMA synchronous = FULL")
        try? db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        let body = [UInt8](repeating: 0x5A, count: Self.textBytes)
        let start = monotonicNanoseconds()
        for _ in 0..<referenceRows {
            _ = try? db.transaction { try db.execute("INSERT INTO t (body) VALUES (?)", [.blob(body)]) }
        }
        let rate = Double(referenceRows) / (Double(monotonicNanoseconds() - start) / 1e9)
        print("reference: SQLite one row per transaction (\(referenceRows) × \(Self.textBytes) B, WAL, synchronous=FULL): \(String(format: "%.0f", rate)) rows/s")
        return rate
    }

    /// What the store alone allows: the rows the engine writes per received message
    /// (insertIncoming; its Delivered receipt is owed by position), 512 per transaction as the relay hands them over.
    private func storeCeiling(directory: String) -> Double {
        guard let store = try? Store(path: directory + "/ceiling.db"),
              let contact = try? store.addContact(NewContact(name: "sam", accountKey: Array(repeating: 1, count: 32),
                                                             deviceKey: Array(repeating: 2, count: 32), deviceCertificate: [3],
                                                             relayAddress: nil), at: 1) else { return 0 }
        defer { store.close() }
        let ids = (0..<messages).map { _ in MessageID.random() }
        let texts = (0..<messages).map { Self.text($0) }
        let start = monotonicNanoseconds()
        var i = 0
        while i < messages {
            let end = min(messages, i + 512)
            // As the engine stores a batch: one call per contact, receipts owed in it.
            let batch = (i..<end).map { IncomingMessage(id: ids[$0], content: .text(texts[$0]), sentAt: 2, seq: Int64($0)) }
            _ = try? store.transaction { tx in
                _ = try tx.insertIncoming(contact: contact.id, batch, at: 2)
            }
            i = end
        }
        let rate = Double(messages) / (Double(monotonicNanoseconds() - start) / 1e9)
        print("store alone: insertIncoming (its Delivered receipt owed by position), 512 per transaction: \(String(format: "%.0f", rate)) messages/s")
        senderCeiling(store, contact: contact.id, texts: texts)
        return rate
    }

    /// The sender's side of the same messages in the store alone: each queued (Sending), the
    /// relay's acknowledgements raising them to Sent, and Delivered receipts of 1,024 ids
    /// raising them to Delivered, a transaction per receipt frame as the engine takes them.
    private func senderCeiling(_ store: Store, contact: ContactID, texts: [String]) {
        var rows: [MessageRowID] = [], ids: [MessageID] = []
        _ = try? store.transaction { tx in
            for text in texts {
                let id = MessageID.random()
                rows.append(try tx.insertOutgoing(contact: contact, id: id, content: .text(text), at: 3))
                ids.append(id)
            }
        }
        func timed(_ what: String, _ body: () throws -> Void) {
            let start = monotonicNanoseconds()
            do { try body() } catch { print("store alone: \(what) failed: \(error)"); return }
            let rate = Double(texts.count) / (Double(monotonicNanoseconds() - start) / 1e9)
            print("store alone, sender: \(what): \(String(format: "%.0f", rate)) messages/s")
        }
        timed("relay acknowledgements (Sent), 512 per transaction") {
            for part in stride(from: 0, to: rows.count, by: 512) {
                let chunk = Array(rows[part..<min(rows.count, part + 512)])
                _ = try store.transaction { tx in try tx.raiseStatuses(messages: chunk, event: .relayAcknowledged, at: 4) }
            }
        }
        timed("Delivered receipts, 1,024 ids per transaction") {
            for part in stride(from: 0, to: ids.count, by: 1024) {
                let chunk = Array(ids[part..<min(ids.count, part + 1024)])
                _ = try store.transaction { tx in try tx.raiseStatuses(contact: contact, ids: chunk, event: .deliveredReceipt, at: 5) }
            }
        }
    }

    // MARK: helpers

    /// A 256-byte text numbered `i`; built from one shared padding, so that making texts
    /// costs next to nothing beside what is measured.
    static func text(_ i: Int) -> String {
        let head = "message \(i) "
        return head + padding.prefix(max(0, textBytes - head.utf8.count))
    }

    private static let padding = String(repeating: "x", count: textBytes)

    private func storedCount(_ db: Database) -> Int {
        (try? db.queryOne("SELECT count(*) FROM messages WHERE direction = 'in'")?.int(at: 0)) ?? -1
    }

    /// Whether Bob still owes a receipt: read off the receipt marks and the partial index of
    /// owed Read receipts, so that polling it every half millisecond takes next to nothing from
    /// the engines it watches (counting the owed messages did: a scan of every message).
    private func owesReceipts(_ db: Database) -> Bool {
        (try? db.queryOne("""
            SELECT EXISTS (SELECT 1 FROM conversation_members WHERE delivered_receipted_through < last_incoming_position)
                OR EXISTS (SELECT 1 FROM messages WHERE read_owed = 1)
            """)?.int(at: 0)) != 0
    }

    private func row(_ name: String, _ ours: Double, _ reference: Double, _ target: String, detail: String) {
        let pad = name.padding(toLength: 40, withPad: " ", startingAt: 0)
        let ratio = reference > 0 ? String(format: "%.2f×", ours / reference) : "n/a"
        print("    \(pad) rchat \(String(format: "%.0f", ours))   one-row-per-txn SQLite \(String(format: "%.0f", reference))   ratio \(ratio)   target \(target)")
        print("      (\(detail))")
    }

    private func ms(_ v: Double) -> String { String(format: "%.2f ms", v) }

    /// What `fail` must not leave behind: the relay it started (by PID) and the directory.
    static let cleanup = Mutex<(pid: Int32, directory: String)?>(nil)

    private func fail(_ message: String) -> Never {
        print("error: \(message)")
        if let (pid, directory) = Self.cleanup.withLock({ $0 }) {
            kill(pid, SIGTERM)
            try? FileManager.default.removeItem(atPath: directory)
        }
        exit(1)
    }
}

/// An engine on a thread of its own, stopped (and waited for) by `stop()`.
final class LiveEngine: Sendable {
    let engine: Engine
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    private let threadName: String

    init(_ account: AccountService, _ recorder: EventRecorder, log: @escaping @Sendable (String) -> Void) throws {
        threadName = "engine-" + account.locations.home.split(separator: "/").last.map(String.init)!
        engine = try Engine(account: account, log: log)
        engine.onEvent = { recorder.record($0) }
    }

    func start() {
        running.store(true, ordering: .relaxed)
        let thread = Thread { [self] in
            ThreadName.setCurrent(threadName)
            do { try engine.run(seconds: nil) } catch { FileHandle.standardError.write(Data("engine stopped: \(error)\n".utf8)) }
            finished.signal()
        }
        thread.start()
    }

    func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        engine.stop()
        finished.wait()
    }
}

/// One account's engine in this process, which can be stopped and started again (a new
/// `Engine` over the same home, as a restarted `rchat` would be), with one event record.
final class Side {
    let account: AccountService
    let events: EventRecorder
    private let log: @Sendable (String) -> Void
    private var engine: LiveEngine?

    init(_ account: AccountService, _ events: EventRecorder, log: @escaping @Sendable (String) -> Void) {
        self.account = account
        self.events = events
        self.log = log
    }

    /// Starts a new engine; false when it cannot be made.
    func start() -> Bool {
        guard engine == nil, let started = try? LiveEngine(account, events, log: log) else { return false }
        engine = started
        started.start()
        return true
    }

    func stop() {
        engine?.stop()
        engine = nil
    }
}

/// Engine events with the monotonic time they were emitted (after the commit that made them true).
final class EventRecorder: Sendable {
    /// The first time each message reached each status: one flat table, sized up front, so
    /// recording on the engine thread costs a hash and a store (a table per message, made
    /// as it first changed, cost Alice's engine a tenth of its time).
    private struct Reached: Hashable {
        let id: MessageID
        let status: MessageStatus
    }
    private struct Record {
        var statusTimes: [Reached: UInt64] = Dictionary(minimumCapacity: 1 << 16)
        /// Non-nil: status times are kept for these messages only (a bulk run watches its
        /// last message; keeping twenty thousand times cost the engine it records for).
        var watched: Set<MessageID>?
        var newMessages = 0
        var lastNewMessage: UInt64 = 0
        var newMessageTimes: [UInt64] = []
    }
    private let record = Mutex(Record())

    /// From now on, keep status times for `ids` only (nil: for every message).
    func watch(only ids: Set<MessageID>?) {
        record.withLock { $0.watched = ids }
    }
    var newMessages: Int { record.withLock { $0.newMessages } }
    var lastNewMessage: UInt64 { record.withLock { $0.lastNewMessage } }
    /// When the (count + 1)-th `.newMessage` came.
    func firstNewMessage(after count: Int) -> UInt64 {
        record.withLock { count < $0.newMessageTimes.count ? $0.newMessageTimes[count] : 0 }
    }

    /// Called on the engine thread for every event: it takes the time and wakes nobody, so
    /// the engine pays a lock and an append (a wake-up per message cost the engine more).
    func record(_ event: ChatEvent) {
        let now = monotonicNanoseconds()
        record.withLock { record in
            switch event {
            case let .statusChanged(_, id, status):
                if let watched = record.watched, !watched.contains(id) { break }
                let key = Reached(id: id, status: status)
                if record.statusTimes[key] == nil { record.statusTimes[key] = now }
            case .newMessage:
                record.newMessages += 1
                record.lastNewMessage = now
                record.newMessageTimes.append(now)
            default:
                break
            }
        }
    }

    func time(_ id: MessageID, _ status: MessageStatus) -> UInt64? {
        record.withLock { $0.statusTimes[Reached(id: id, status: status)] }
    }

    /// Waits until `predicate` holds, checking it every 2 ms: the times it reads were
    /// taken when the events came, so the polling adds nothing to them, and polling more
    /// often only took CPU from the engines being measured.
    func wait(timeout: Double, until predicate: (EventRecorder) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !predicate(self) {
            if Date() >= deadline { return false }
            usleep(2_000)
        }
        return true
    }
}
