import Foundation
import Dispatch
import RChatCrypto
import RChatWire
import Synchronization

/// The `HeldTally` of every recipient mailbox, sending host and sending mailbox in the
/// `rchat-held` bucket (`TallyKey.name(hiding:)`; TTL the hold, so a tally no frame changed for 72 h
/// is gone with what it counted). Changes to one tally wait in one list and are applied in
/// order by one worker at a time, each batch with one compare-and-set of the bucket's
/// entry (under the tally's lock, so two nodes' batches are never both stored on one
/// revision: `TallyBucket`). A frame is counted by its recipient's tally, then its host's, then its sender's
/// (one refusing gives it back to those before), and published only once all counted it —
/// except a frame for a connected recipient that keeps up (less than a handover window
/// held for it), published once its recipient's tally took it and counted by the others
/// after, as one relay forwards it: live chat waits for one compare-and-set, not three.
/// While a recipient has frames waiting for their host's and sender's tallies, its live
/// frames wait behind them, so the frames of one sender to one mailbox keep their order. A
/// refusal is only ever made on a tally read from the bucket, never on a cached one.
final class ClusterTallies: @unchecked Sendable {
    /// A frame waiting for its charge to be counted, then published.
    struct Hold: Sendable {
        let charge: HeldCharge
        let heldAt: Int64
        /// The tallies it is counted by, in order (`TallyKey.keys`), and how many already did.
        let keys: [TallyKey]
        var counted = 0
        /// For a connected recipient (`forwarded`): may be published before its host and
        /// sender counted it.
        let live: Bool
        /// Waiting for the host's and sender's tallies (its recipient's live frames wait too).
        var strict = false
        /// Counted in its recipient's `unpublished`.
        var tracked = false
        let subject: String
        let data: [UInt8]
        let token: UInt64
    }

    enum Change: Sendable {
        case hold(Hold)
        /// `then`: a refusal waiting for its give-backs (applied at once, not gathered).
        case release(HeldCharge, heldAt: Int64, then: GivenBack?)
        /// A live frame already published: counted, never refused.
        case count(HeldCharge, heldAt: Int64)
        /// A recipient handed everything, nothing written to its tally since `revision`:
        /// zeroed (`settle`). Any other write in between leaves it as it is.
        case handedOver(ifRevision: UInt64)
    }

    private struct Pending {
        var waiting: [Change] = []
        var running = false
        /// A worker starts after `gathering`, with what gathered meanwhile.
        var scheduled = false
        /// The entry as this node last wrote or read it (a guess until read again).
        var known: (tally: HeldTally, revision: UInt64)?
        /// A recipient's frames waiting for their host's and sender's tallies.
        var strict = 0
        /// A recipient's frames neither published nor refused yet.
        var unpublished = 0
        /// The bytes of the live frames waiting to be counted (`.count`).
        var gatheredBytes = 0
    }

    private let bucket: TallyBucket
    private let limits: HeldLimits
    private let namingKey: SecretBytes
    private let state = Mutex<[TallyKey: Pending]>([:])
    private let closing = Atomic<Bool>(false)
    private static let keptTallies = 4096
    /// How long what can wait (frames given back, live frames counted after) gathers before
    /// it is written, so that one write carries many.
    private static let gathering = 0.05
    /// Unanswered reads or failed writes of one batch before its frames are refused.
    private static let failuresBeforeRefusing = 3
    /// Other nodes' writes to the same tally in between one batch's attempts, or its lock
    /// held by another node, before its frames are refused (each a fresh read from the
    /// leader, so this is contention).
    private static let conflictsBeforeRefusing = 64
    private let workers = (0..<4).map { DispatchQueue(label: "rchat-relay cluster tallies \($0)") }
    /// Publishes a frame whose charge is counted; nil when it was handed to JetStream (the
    /// answer comes later), else the refusal.
    private let publish: @Sendable (Hold) -> PublishOutcome?
    private let answer: @Sendable (UInt64, PublishOutcome) -> Void

    private let settling: Double
    private let observe: @Sendable (MailboxID, Settled) -> Void

    /// What became of a handed-over recipient's tally (`settle`), for tests.
    enum Settled: Equatable, Sendable {
        /// Read when it was handed everything (nothing to zero when it counts nothing).
        case read(revision: UInt64)
        case zeroed
        /// Written by another change in between: left as it is.
        case writtenMeanwhile
        /// Its connection was handed something more, or closed.
        case broken
    }

    init(bucket: TallyBucket, limits: HeldLimits, namingKey: SecretBytes, settling: Double = ClusterTallies.quietBeforeZeroing,
         publish: @escaping @Sendable (Hold) -> PublishOutcome?, answer: @escaping @Sendable (UInt64, PublishOutcome) -> Void,
         observe: @escaping @Sendable (MailboxID, Settled) -> Void = { _, _ in }) {
        self.bucket = bucket
        self.limits = limits
        self.namingKey = namingKey
        self.settling = settling
        self.publish = publish
        self.answer = answer
        self.observe = observe
    }

    /// Counts `hold` (then publishes it, or refuses it with `.overQuota`). A live frame for a
    /// recipient that keeps up by what this node last read of its tally, with nothing of
    /// its own waiting before it, is published at once and counted after.
    func hold(_ hold: Hold) {
        var hold = hold
        let key = hold.keys[0]
        let now = state.withLock { all -> Bool in
            if hold.live, let entry = all[key], entry.unpublished == 0, let known = entry.known,
               known.tally.total(now: hold.heldAt, holdSeconds: limits.holdSeconds).bytes + entry.gatheredBytes + hold.charge.bytes
                <= limits.handoverWindowBytes {
                return true
            }
            all[key, default: Pending()].unpublished += 1
            return false
        }
        if now {
            published(hold)
            for counting in hold.keys { change(counting, .count(hold.charge, heldAt: hold.heldAt)) }
        } else {
            hold.tracked = true
            change(key, .hold(hold))
        }
    }

    /// A frame counted by `keys` is gone.
    func release(_ charge: HeldCharge, heldAt: Int64, keys: [TallyKey]) {
        for key in keys { change(key, .release(charge, heldAt: heldAt, then: nil)) }
    }

    /// A recipient's connection was handed all it held and acknowledged it: its tally is
    /// zeroed (what a failure left counted — a publish never answered, a node gone between
    /// counting and publishing or between deleting and giving back — stops counting) if it
    /// stays quiet. Zeroing at once would wipe a frame another node counted before the
    /// handover caught up and published after (or one being given back): so the tally is
    /// read now, and zeroed `quietBeforeZeroing` later (longer than a publish may wait) on that
    /// revision only — unless `mark` was broken meanwhile (the connection was handed
    /// something more, or closed), or anything was written to the tally in between.
    func settle(_ mailbox: MailboxID, mark: QuietMark) {
        let key = TallyKey.recipient(mailbox)
        let worker = workers[abs(key.hashValue % workers.count)], name = key.name(hiding: namingKey)
        worker.async { [self] in
            guard !closing.load(ordering: .acquiring), mark.isQuiet, let read = bucket.read(name) else { return }
            observe(mailbox, .read(revision: read.revision))
            guard read.revision > 0, !read.tally.slots.isEmpty else { return }
            worker.asyncAfter(deadline: .now() + settling) { [self] in
                if mark.isQuiet { change(key, .handedOver(ifRevision: read.revision)) } else { observe(mailbox, .broken) }
            }
        }
    }

    /// How long a handed-over recipient's tally must stay unwritten to be zeroed: a publish's
    /// wait for JetStream, and some.
    static let quietBeforeZeroing = Double(ClusterLink.publishWait) / 1000 + 5

    /// Set by the loop, read by a worker: false once its connection was handed anything after
    /// it caught up, or closed.
    final class QuietMark: Sendable {
        private let quiet = Atomic<Bool>(true)
        var isQuiet: Bool { quiet.load(ordering: .acquiring) }
        func broken() { quiet.store(false, ordering: .releasing) }
    }

    private func change(_ key: TallyKey, _ change: Change) {
        // A frame to hold, and a handover's zeroing (which must not wipe what is counted
        // after it), are applied at once; the rest gathers.
        var urgent = true
        switch change {
        case .hold, .handedOver: break
        case .release(_, _, let then): urgent = then != nil
        case .count: urgent = false
        }
        // In place: a copy of the entry would copy its list at every change.
        let start = state.withLock { all -> Bool? in
            all[key, default: Pending()].waiting.append(change)
            if case .count(let charge, _) = change { all[key]!.gatheredBytes += charge.bytes }
            guard let entry = all[key], !entry.running else { return nil }
            if urgent {
                all[key]!.running = true
                return true
            }
            guard !entry.scheduled else { return nil }
            all[key]!.scheduled = true
            return false
        }
        let worker = workers[abs(key.hashValue % workers.count)]
        switch start {
        case true?: worker.async { [self] in work(key) }
        case false?: worker.asyncAfter(deadline: .now() + Self.gathering) { [self] in startGathered(key) }
        case nil: break
        }
    }

    /// What gathered for `key` is applied, unless a worker already took it.
    private func startGathered(_ key: TallyKey) {
        let start = state.withLock { all -> Bool in
            guard all[key] != nil else { return false }
            all[key]!.scheduled = false
            guard !all[key]!.running, !all[key]!.waiting.isEmpty else { return false }
            all[key]!.running = true
            return true
        }
        if start { work(key) }
    }

    /// Applies what waits for `key`, batch after batch, until nothing does.
    private func work(_ key: TallyKey) {
        while true {
            let (changes, known) = state.withLock { all -> ([Change], (tally: HeldTally, revision: UInt64)?) in
                guard var entry = all[key] else { return ([], nil) }
                let taken = entry.waiting
                entry.waiting = []
                entry.gatheredBytes = 0
                if taken.isEmpty {
                    // Nothing more. What was last known is kept for the next frame (one
                    // round trip instead of two), for a few thousand tallies at most.
                    entry.running = false
                    all[key] = all.count > Self.keptTallies && entry.unpublished == 0 && !entry.scheduled ? nil : entry
                } else {
                    all[key] = entry
                }
                return (taken, entry.known)
            }
            guard !changes.isEmpty, !closing.load(ordering: .acquiring) else { return }
            let written = apply(changes, key: key, known: known)
            state.withLock { all in all[key]?.known = written }
        }
    }

    /// One batch: the tally read (or as last known), every change applied in order, the
    /// result written with compare-and-set — again from a fresh read when another node
    /// changed it meanwhile, or when a frame would be refused on what was only known.
    /// Then the frames it counted are published, and the others refused. Returns the entry
    /// as written (nil when unknown).
    ///
    /// When the bucket keeps failing (`TallyBucket.Written.failed`, an unanswered read) or
    /// keeps changing, the frames to hold are refused (`.clusterUnavailable`, uncounted),
    /// and what must be counted whatever happens (frames given back, live frames counted
    /// after, a handover) waits for the next batch: it is never dropped, so a tally never
    /// keeps counting what is gone.
    private func apply(_ changes: [Change], key: TallyKey, known start: (tally: HeldTally, revision: UInt64)?) -> (tally: HeldTally, revision: UInt64)? {
        var known = start, fresh = false, failures = 0, conflicts = 0
        let name = key.name(hiding: namingKey)
        let stop = { [self] in closing.load(ordering: .acquiring) }
        attempts: while !stop() {
            if known == nil {
                guard let read = bucket.read(name) else {
                    failures += 1
                    if failures >= Self.failuresBeforeRefusing { break attempts }
                    Thread.sleep(forTimeInterval: 0.1 * Double(failures))
                    continue
                }
                known = read
                fresh = true
            }
            var tally = known!.tally
            var verdicts: [RefusalReason?] = []
            var keepsUp: [Bool] = []
            var zeroed: [Bool] = []
            for change in changes {
                keepsUp.append(false)
                switch change {
                case .hold(let hold):
                    if hold.live, hold.counted == 0 {
                        keepsUp[keepsUp.count - 1] = tally.total(now: hold.heldAt, holdSeconds: limits.holdSeconds).bytes + hold.charge.bytes
                            <= limits.handoverWindowBytes
                    }
                    verdicts.append(tally.admit(hold.charge, heldAt: hold.heldAt, as: key, limits: limits))
                case .release(let charge, let heldAt, _): tally.release(charge, heldAt: heldAt, as: key); verdicts.append(nil)
                case .count(let charge, let heldAt): tally.count(charge.bytes, heldAt: heldAt); verdicts.append(nil)
                case .handedOver(let revision):
                    // Only on the revision read when it was handed everything, with nothing of
                    // this batch before it (a cached entry's write conflicts if it is stale).
                    let quiet = known!.revision == revision && tally == known!.tally
                    if quiet { tally.handedOver() }
                    zeroed.append(quiet)
                    verdicts.append(nil)
                }
            }
            if !fresh, verdicts.contains(where: { $0 != nil }) {
                known = nil
                continue
            }
            if tally != known!.tally {
                switch bucket.write(name, tally, after: known!.revision, stop: stop) {
                case .revision(let revision):
                    known = (tally, revision)
                case .conflict:
                    // Another node wrote it: read it again (the leader has it, so the next
                    // attempt sees that write), a little later when it keeps happening.
                    known = nil
                    conflicts += 1
                    if conflicts >= Self.conflictsBeforeRefusing { break attempts }
                    if conflicts > 2 { Thread.sleep(forTimeInterval: Double.random(in: 0.001...0.01)) }
                    continue
                case .failed:
                    known = nil
                    failures += 1
                    if failures >= Self.failuresBeforeRefusing { break attempts }
                    Thread.sleep(forTimeInterval: 0.1 * Double(failures))
                    continue
                }
            }
            for case .release(_, _, let then?) in changes { then.one() }
            if case .recipient(let mailbox) = key {
                for quiet in zeroed { observe(mailbox, quiet ? .zeroed : .writtenMeanwhile) }
            }
            var behindStrict = state.withLock { $0[key]?.strict ?? 0 } > 0
            for (i, change) in changes.enumerated() {
                guard case .hold(var hold) = change else { continue }
                if let verdict = verdicts[i] {
                    refuse(hold, verdict)
                } else if hold.counted + 1 < hold.keys.count {
                    if hold.counted == 0, keepsUp[i], !behindStrict {
                        published(hold)
                        for later in hold.keys.dropFirst() { self.change(later, .count(hold.charge, heldAt: hold.heldAt)) }
                        continue
                    }
                    if hold.counted == 0 {
                        hold.strict = true
                        behindStrict = true
                        state.withLock { $0[key]?.strict += 1 }
                    }
                    hold.counted += 1
                    self.change(hold.keys[hold.counted], .hold(hold))
                } else {
                    published(hold)
                }
            }
            return known
        }
        var kept: [Change] = []
        for change in changes {
            if case .hold(let hold) = change { refuse(hold, .clusterUnavailable) } else { kept.append(change) }
        }
        if !kept.isEmpty, !stop() {
            state.withLock { all in
                all[key, default: Pending()].waiting.insert(contentsOf: kept, at: 0)
                for case .count(let charge, _) in kept { all[key]!.gatheredBytes += charge.bytes }
            }
        }
        return nil
    }

    /// Not counted by its tally now: those that counted it give it back, and the refusal is
    /// answered once they all wrote it (so a sender told "full" finds the room it was
    /// refused on given back when it tries again).
    private func refuse(_ hold: Hold, _ reason: RefusalReason) {
        let counted = Array(hold.keys.prefix(hold.counted)), token = hold.token, answer = self.answer
        if counted.isEmpty {
            answer(token, .overQuota(reason))
        } else {
            let back = GivenBack(count: counted.count) { answer(token, .overQuota(reason)) }
            for key in counted { change(key, .release(hold.charge, heldAt: hold.heldAt, then: back)) }
        }
        done(hold)
    }

    private func published(_ hold: Hold) {
        // Refused by JetStream: the loop gives it back (as for a later refusal).
        if let outcome = publish(hold) { answer(hold.token, outcome) }
        done(hold)
    }

    /// Its recipient's live frames need not wait for it any more.
    private func done(_ hold: Hold) {
        guard hold.strict || hold.tracked else { return }
        state.withLock { all in
            if hold.strict { all[hold.keys[0]]?.strict -= 1 }
            if hold.tracked { all[hold.keys[0]]?.unpublished -= 1 }
        }
    }

    /// A refusal's answer, sent once each tally that had counted the frame wrote it back.
    final class GivenBack: Sendable {
        private let remaining: Atomic<Int>
        private let then: @Sendable () -> Void

        init(count: Int, then: @escaping @Sendable () -> Void) {
            remaining = Atomic(count)
            self.then = then
        }

        func one() { if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { then() } }
    }

    /// Waits for every worker (at close); what still waits is dropped (the tallies are
    /// zeroed at the next complete handover, or expire with the hold).
    func finish() {
        closing.store(true, ordering: .releasing)
        for worker in workers { worker.sync {} }
    }
}
