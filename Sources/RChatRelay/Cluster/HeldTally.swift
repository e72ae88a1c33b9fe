import RChatCore
import RChatCrypto
import RChatNet
import RChatWire

/// What one frame held in a cluster counts against its recipient's mailbox.
enum HeldCharge: Equatable, Sendable {
    /// A conversation's frame (sent ahead or not): `--quota-bytes`.
    case conversation(bytes: Int)
    /// Cover (link 0, for the sender's own mailbox): `--quota-bytes` and the cover
    /// allowance (`--cover-quota`, `--cover-quota-bytes`).
    case cover(bytes: Int)
    /// A message request: `--request-quota` held, and as many sent in a burst, refilled at
    /// that many per hour. Its bytes count for its sender only.
    case request(bytes: Int)

    init(_ kind: ClusterNode.Kind, origin: DeliveryOrigin, bytes: Int) {
        if kind == .request {
            self = .request(bytes: bytes)
        } else if origin == .own {
            self = .cover(bytes: bytes)
        } else {
            self = .conversation(bytes: bytes)
        }
    }

    var bytes: Int {
        switch self {
        case .conversation(let n), .cover(let n), .request(let n): return n
        }
    }
}

/// Whose held frames a tally counts: a recipient mailbox's (every limit of a mailbox), or
/// what one sending host or one sending mailbox has held over every recipient (bytes,
/// `--max-held-bytes-per-host`, `--max-held-bytes-per-sender`).
enum TallyKey: Hashable, Sendable {
    case recipient(MailboxID)
    case host(HostAddress)
    case sender(MailboxID)

    /// Its key in the bucket: a recipient's mailbox in hex (as the stream's subjects name
    /// it), a host or a sending mailbox by a hash keyed with `key` (derived from the relay
    /// key), so that what NATS stores names no sender and no address.
    func name(hiding key: SecretBytes) -> String {
        switch self {
        case .recipient(let mailbox):
            return mailbox.hex
        case .host(let host):
            var w = ByteWriter(capacity: 17)
            w.u8(1); w.u64(host.high); w.u64(host.low)
            return "h." + Hex.encode(Hash.blake2b(w.bytes, key: key, outputBytes: 16))
        case .sender(let mailbox):
            return "s." + Hex.encode(Hash.blake2b([2] + mailbox.bytes, key: key, outputBytes: 16))
        }
    }

    /// The recipient's tally, then its sender's host's and mailbox's when known: the order a
    /// frame is counted in.
    static func keys(recipient: MailboxID, sender: HeldSender) -> [TallyKey] {
        [.recipient(recipient)] + (sender.host.map { [.host($0)] } ?? []) + (sender.mailbox.map { [.sender($0)] } ?? [])
    }
}

/// The limits a cluster enforces across its nodes.
struct HeldLimits: Equatable, Sendable {
    var quotaBytes: Int
    var requestQuota: Int
    var coverQuota: Int
    var coverQuotaBytes: Int
    var heldBytesPerHost: Int
    var heldBytesPerSender: Int
    var holdSeconds: Int64
    /// A connected recipient with less than this held for it keeps up: frames for it are
    /// forwarded (published before their host's and sender's tallies counted them).
    var handoverWindowBytes: Int

    init(_ c: RelayConfiguration) {
        quotaBytes = c.quotaBytes
        requestQuota = c.requestQuota
        coverQuota = c.coverQuota
        coverQuotaBytes = c.coverQuotaBytes
        heldBytesPerHost = c.heldBytesPerHost
        heldBytesPerSender = c.heldBytesPerSender
        holdSeconds = c.holdSeconds
        handoverWindowBytes = c.handoverWindowBytes
    }
}

/// The frames held in a cluster for one recipient mailbox, or sent by one host or one
/// mailbox, as every node counts them (issue 27, findings 1 and 11): kept in a JetStream
/// bucket and changed only by compare-and-set (`ClusterTallies`), so two nodes together
/// hold no more than one relay would. A frame is counted when a node takes it, in the
/// slot of the hour it was held, and uncounted when it is acknowledged or JetStream refused
/// it; a slot whose frames have all expired is dropped, so what expired unacknowledged
/// stops counting as it does in one relay. A recipient whose connection was handed all it
/// held (`drained`) holds nothing, and its slots are emptied once that stays so a while
/// (`ClusterTallies.settle`). A pure value.
struct HeldTally: Equatable, Sendable {
    struct Slot: Equatable, Sendable {
        var bytes = 0
        var requests = 0
        var cover = 0
        var coverBytes = 0

        var isEmpty: Bool { self == Slot() }

        static func + (a: Slot, b: Slot) -> Slot {
            Slot(bytes: a.bytes + b.bytes, requests: a.requests + b.requests, cover: a.cover + b.cover, coverBytes: a.coverBytes + b.coverBytes)
        }
    }

    /// Hour held (`heldAt / 3600`) → what the frames held in that hour count.
    var slots: [Int64: Slot] = [:]
    /// The message requests a recipient may still be sent (a token bucket, refilled at
    /// `requestQuota` per hour up to `requestQuota`) as of `tokensAt`; nil for a full one.
    var requestTokens: Double?
    var tokensAt: Int64 = 0

    static let hour: Int64 = 3600

    /// What the frames not expired at `now` count.
    func total(now: Int64, holdSeconds: Int64) -> Slot {
        slots.filter { !Self.expired($0.key, now: now, holdSeconds: holdSeconds) }.values.reduce(Slot(), +)
    }

    private static func expired(_ hour: Int64, now: Int64, holdSeconds: Int64) -> Bool { (hour + 1) * Self.hour + holdSeconds <= now }

    /// Counts a frame of `charge` held at `heldAt` against this tally as `key` counts it, if
    /// it fits; the refusal otherwise (and nothing changes). Expired slots go.
    mutating func admit(_ charge: HeldCharge, heldAt: Int64, as key: TallyKey, limits: HeldLimits) -> RefusalReason? {
        slots = slots.filter { !Self.expired($0.key, now: heldAt, holdSeconds: limits.holdSeconds) }
        let held = total(now: heldAt, holdSeconds: limits.holdSeconds)
        var add = Slot(bytes: charge.bytes)
        switch key {
        case .host, .sender:
            guard held.bytes + charge.bytes <= (key.isHost ? limits.heldBytesPerHost : limits.heldBytesPerSender) else { return .relayFull }
        case .recipient:
            switch charge {
            case .conversation(let n):
                guard held.bytes + n <= limits.quotaBytes else { return .byteQuotaExceeded }
            case .cover(let n):
                guard held.bytes + n <= limits.quotaBytes else { return .byteQuotaExceeded }
                guard held.cover < limits.coverQuota, held.coverBytes + n <= limits.coverQuotaBytes else { return .quotaExceeded }
                add = Slot(bytes: n, cover: 1, coverBytes: n)
            case .request:
                // Message requests count apart from the conversations' bytes.
                let capacity = Double(limits.requestQuota)
                let tokens = min(capacity, (requestTokens ?? capacity) + Double(max(0, heldAt - tokensAt)) * capacity / 3600)
                guard held.requests < limits.requestQuota, tokens >= 1 else { return .requestQuotaExceeded }
                requestTokens = tokens - 1
                tokensAt = heldAt
                add = Slot(requests: 1)
            }
        }
        slots[heldAt / Self.hour, default: Slot()] = slots[heldAt / Self.hour, default: Slot()] + add
        return nil
    }

    /// Counts a live frame's `bytes` (already published) against a host's or sender's tally,
    /// whatever it holds.
    mutating func count(_ bytes: Int, heldAt: Int64) {
        slots[heldAt / Self.hour, default: Slot()].bytes += bytes
    }

    /// A counted frame is gone (acknowledged, or not stored after all): its slot gives it back.
    mutating func release(_ charge: HeldCharge, heldAt: Int64, as key: TallyKey) {
        let hour = heldAt / Self.hour
        guard var slot = slots[hour] else { return }
        switch (key, charge) {
        case (.host, _), (.sender, _), (.recipient, .conversation):
            slot.bytes = max(0, slot.bytes - charge.bytes)
        case (.recipient, .cover(let n)):
            slot.bytes = max(0, slot.bytes - n)
            slot.cover = max(0, slot.cover - 1)
            slot.coverBytes = max(0, slot.coverBytes - n)
        case (.recipient, .request):
            slot.requests = max(0, slot.requests - 1)
        }
        slots[hour] = slot.isEmpty ? nil : slot
    }

    /// The recipient's connection was handed all it held and acknowledged it: nothing is
    /// held. What was sent lately (the request budget) is kept.
    mutating func handedOver() { slots = [:] }

    /// As the bucket keeps it: "v1 TOKENS AT" then "HOUR:BYTES:REQUESTS:COVER:COVERBYTES"
    /// per slot, oldest first (tokens "-" for a full bucket).
    var encoded: String {
        var text = "v1 \(requestTokens.map { "\($0)" } ?? "-") \(tokensAt)"
        for (hour, s) in slots.sorted(by: { $0.key < $1.key }) { text += " \(hour):\(s.bytes):\(s.requests):\(s.cover):\(s.coverBytes)" }
        return text
    }

    /// Nil for text that is not a tally (counted afresh).
    init?(encoded text: String) {
        let parts = text.split(separator: " ").map(String.init)
        guard parts.count >= 3, parts[0] == "v1", let at = Int64(parts[2]) else { return nil }
        if parts[1] == "-" { requestTokens = nil } else if let t = Double(parts[1]) { requestTokens = t } else { return nil }
        tokensAt = at
        for part in parts.dropFirst(3) {
            let n = part.split(separator: ":").compactMap { Int64($0) }
            guard n.count == 5, n.dropFirst().allSatisfy({ $0 >= 0 }), slots[n[0]] == nil else { return nil }
            slots[n[0]] = Slot(bytes: Int(n[1]), requests: Int(n[2]), cover: Int(n[3]), coverBytes: Int(n[4]))
        }
    }

    init(slots: [Int64: Slot] = [:], requestTokens: Double? = nil, tokensAt: Int64 = 0) {
        self.slots = slots
        self.requestTokens = requestTokens
        self.tokensAt = tokensAt
    }
}

extension TallyKey {
    var isHost: Bool {
        if case .host = self { return true }
        return false
    }
}
