@preconcurrency import CSodium
import RChatCore

/// What a ratcheted envelope says of its key, inside its sealed header: the sender's
/// ratchet public key, how many envelopes it sent in its previous sending chain, and this
/// one's number in the current chain.
public struct RatchetHeader: Sendable, Equatable {
    public static let encodedBytes = AgreementKey.keyBytes + 4 + 4

    public let publicKey: [UInt8]
    public let previousCount: UInt32
    public let number: UInt32

    public init(publicKey: [UInt8], previousCount: UInt32, number: UInt32) {
        precondition(publicKey.count == AgreementKey.keyBytes)
        self.publicKey = publicKey
        self.previousCount = previousCount
        self.number = number
    }
}

/// The Double Ratchet inside one session (Signal's specification; DESIGN.md §18;
/// docs/PROTOCOL.md "Double Ratchet"): a pure value. Every envelope body is sealed under a
/// message key of its own, derived from a chain key that then moves on; each change of
/// direction brings a Diffie–Hellman step that mixes fresh X25519 keys into the root key.
///
/// Start (from the handshake): the root key and the responder's first sending chain come
/// from the session keys; the responder's handshake ephemeral key is its first ratchet key
/// (as Signal uses Bob's signed prekey). The initiator steps at once with a fresh key of
/// its own, so its first envelope is already under a DH-derived chain; the responder's
/// envelopes before the initiator's first one are under its symmetric chain.
///
/// KDFs, keyed BLAKE2b with distinct labels: root step
/// `deriveKey(RK, "rchat ratchet root v1" ‖ DH)` and `deriveKey(RK, "rchat ratchet chain v1"
/// ‖ DH)`; chain step `BLAKE2b(key: CK, 0x01)` (message key) and `BLAKE2b(key: CK, 0x02)`
/// (next chain key).
///
/// Keys of envelopes skipped in a chain (lost or reordered on the way) are kept, at most
/// `maxSkipped`, none older than `skippedLifetime`: the oldest go first. Opening works on a
/// copy (`opened`): a frame that does not open leaves the ratchet as it was.
public struct Ratchet: Sendable {
    /// Skipped message keys kept per session.
    public static let maxSkipped = 1_000
    /// The relay holds a frame at most 72 h: a key skipped longer ago opens nothing it still holds.
    public static let skippedLifetime: Int64 = 72 * 3600
    /// The most envelopes one frame may skip in a chain (a header claiming more does not
    /// open: its keys are never derived). A relay's quota keeps a real gap far below.
    public static let maxGap: UInt32 = 50_000
    /// Ratchet keys of the peer's chains this side stepped past, remembered so that a frame
    /// of one reads as used (or lost), not as altered.
    static let formerRemotesKept = 64

    struct Skipped: Sendable {
        let publicKey: [UInt8]
        let number: UInt32
        let key: SecretBytes
        let at: Int64
    }

    private var root: SecretBytes
    private var mine: AgreementKey
    private var remote: [UInt8]?
    private var sendChain: SecretBytes?
    private var receiveChain: SecretBytes?
    private var sent: UInt32 = 0
    private var received: UInt32 = 0
    private var previousCount: UInt32 = 0
    private var skipped: [Skipped] = []
    /// The places of skipped keys dropped over `maxSkipped` (at most as many): a frame for
    /// one was lost with its key, not used — the could-not-read way recovers it.
    private var dropped: [(publicKey: [UInt8], number: UInt32)] = []
    private var formerRemotes: [[UInt8]] = []

    /// Why a frame's key cannot be had.
    public enum Failure: Error, Equatable, Sendable {
        /// Its key opened a body already: a duplicate or a replay.
        case used
        /// Its key was dropped over `maxSkipped`: the frame cannot be read here.
        case lost
        /// It claims more skipped envelopes than `maxGap`, or a ratchet key no DH accepts.
        case implausible
    }

    // MARK: starting

    /// The initiator: `responderKey` is the responder's handshake ephemeral public key.
    static func initiator(sessionKeys keys: SessionKeys, responderKey: [UInt8]) throws(CryptoError) -> Ratchet {
        let (root, responderChain) = Self.start(keys)
        let mine = AgreementKey.generate()
        var ratchet = Ratchet(root: root, mine: mine)
        ratchet.remote = responderKey
        ratchet.receiveChain = responderChain
        let dh = try mine.sharedSecret(with: responderKey)
        (ratchet.root, ratchet.sendChain) = Self.rootStep(ratchet.root, dh)
        return ratchet
    }

    /// The responder: `ephemeral` is the key pair it answered the handshake with.
    static func responder(sessionKeys keys: SessionKeys, ephemeral: AgreementKey) -> Ratchet {
        let (root, responderChain) = Self.start(keys)
        var ratchet = Ratchet(root: root, mine: ephemeral)
        ratchet.sendChain = responderChain
        return ratchet
    }

    private init(root: SecretBytes, mine: AgreementKey) {
        self.root = root
        self.mine = mine
    }

    /// The root key and the responder's symmetric first chain, from the handshake's keys.
    private static func start(_ keys: SessionKeys) -> (root: SecretBytes, responderChain: SecretBytes) {
        let toResponder = keys.role == .initiator ? keys.sendKey : keys.receiveKey
        let toInitiator = keys.role == .initiator ? keys.receiveKey : keys.sendKey
        return (Hash.deriveKey(from: toResponder, context: "rchat ratchet start root v1", keys.sessionID),
                Hash.deriveKey(from: toInitiator, context: "rchat ratchet start chain v1", keys.sessionID))
    }

    private static func rootStep(_ root: SecretBytes, _ dh: SecretBytes) -> (root: SecretBytes, chain: SecretBytes) {
        (Hash.deriveKey(from: root, context: "rchat ratchet root v1", secret: dh),
         Hash.deriveKey(from: root, context: "rchat ratchet chain v1", secret: dh))
    }

    /// One chain step: the message key at this position and the next chain key.
    static func chainStep(_ chain: SecretBytes) -> (message: SecretBytes, next: SecretBytes) {
        (chainDerive(chain, 1), chainDerive(chain, 2))
    }

    private static func chainDerive(_ chain: SecretBytes, _ label: UInt8) -> SecretBytes {
        var input = label
        return SecretBytes(count: AEAD.keyBytes) { out in
            chain.withBytes { k in _ = crypto_generichash(out, AEAD.keyBytes, &input, 1, k, chain.count) }
        }
    }

    // MARK: sending

    /// The key the next envelope is sealed under, and the header that names it.
    /// `stepping`: the envelope is one the user wrote (an item), and takes the sending half
    /// of a DH step that is owed (a new key of the peer's opened since this side last
    /// stepped); what rChat sends by itself (receipts, cover, chunks, notices) rides the
    /// sending chain as it is, so a stream of messages answered by receipts takes no DH
    /// at all — post-compromise security comes with the conversation's next reply, as the
    /// specification's does.
    public mutating func nextSendKey(stepping: Bool = true) -> (header: RatchetHeader, key: SecretBytes) {
        if stepping && stepOwed, let theirs = remote {
            let next = AgreementKey.generate()
            // A low-order peer key never got this far: its receiving half refused it.
            if let sending = try? next.sharedSecret(with: theirs) {
                mine = next
                (root, sendChain) = Self.rootStep(root, sending)
                previousCount = sent
                sent = 0
                stepOwed = false
            }
        }
        guard let chain = sendChain else { preconditionFailure("a ratchet always has a sending chain") }
        let (message, next) = Self.chainStep(chain)
        sendChain = next
        let header = RatchetHeader(publicKey: mine.publicKey, previousCount: previousCount, number: sent)
        sent &+= 1
        return (header, message)
    }

    // MARK: receiving

    /// The key of the peer's envelope with `header`, the ratchet moved past it. Work on a
    /// copy and keep it only when the body opened (`opened(_:at:)` does).
    public mutating func receiveKey(_ header: RatchetHeader, at now: Int64) throws(Failure) -> SecretBytes {
        if let i = skipped.firstIndex(where: { $0.number == header.number && $0.publicKey == header.publicKey }) {
            return skipped.remove(at: i).key
        }
        if dropped.contains(where: { $0.number == header.number && $0.publicKey == header.publicKey }) { throw .lost }
        if header.publicKey != remote {
            guard !formerRemotes.contains(header.publicKey) else { throw .used }
            if remote != nil { try skip(to: header.previousCount, at: now) }
            try step(to: header.publicKey)
        }
        guard header.number >= received else { throw .used }
        try skip(to: header.number, at: now)
        let (message, next) = Self.chainStep(receiveChain!)
        receiveChain = next
        received = header.number &+ 1
        return message
    }

    /// The receiving half of a DH step, at a new ratchet key of the peer's (at most one is
    /// ever owed: the peer makes a new key only after it saw this side's).
    private mutating func step(to theirs: [UInt8]) throws(Failure) {
        if let former = remote {
            formerRemotes.append(former)
            if formerRemotes.count > Self.formerRemotesKept { formerRemotes.removeFirst(formerRemotes.count - Self.formerRemotesKept) }
        }
        guard let received = try? mine.sharedSecret(with: theirs) else { throw .implausible }
        (root, receiveChain) = Self.rootStep(root, received)
        remote = theirs
        self.received = 0
        // The sending half (a new key of this side's) comes with the next envelope that
        // steps (`nextSendKey`): until then this side seals on, in its chain as it is.
        stepOwed = true
    }

    /// The sending half of a DH step is owed: a new key of the peer's opened since.
    private(set) var stepOwed = false

    /// Keeps the keys of the current receiving chain's envelopes before `number`.
    private mutating func skip(to number: UInt32, at now: Int64) throws(Failure) {
        guard number > received else { return }
        guard number - received <= Self.maxGap, var chain = receiveChain, let remote else { throw .implausible }
        for n in received..<number {
            let (message, next) = Self.chainStep(chain)
            chain = next
            skipped.append(Skipped(publicKey: remote, number: n, key: message, at: now))
        }
        receiveChain = chain
        received = number
        if skipped.count > Self.maxSkipped {
            let over = skipped.count - Self.maxSkipped
            dropped += skipped.prefix(over).map { ($0.publicKey, $0.number) }
            skipped.removeFirst(over)
            if dropped.count > Self.maxSkipped { dropped.removeFirst(dropped.count - Self.maxSkipped) }
        }
    }

    /// Drops skipped keys older than `skippedLifetime` (the relay holds nothing of theirs any more).
    public mutating func prune(now: Int64) {
        skipped.removeAll { now - $0.at > Self.skippedLifetime }
    }

    /// How many skipped keys it holds.
    public var skippedCount: Int { skipped.count }

    /// This side's ratchet public key now (what its next envelope names).
    public var publicKey: [UInt8] { mine.publicKey }

    /// Its chain keys now (tests of erasure find the one that was current after it moved on).
    var chainKeys: (send: SecretBytes?, receive: SecretBytes?) { (sendChain, receiveChain) }

    /// Every secret it holds (root, chains, its ratchet key, skipped keys): what a copy of
    /// the state gives away, for the tests of what a copy cannot open.
    var heldSecrets: [SecretBytes] {
        [root, mine.secretKey] + [sendChain, receiveChain].compactMap { $0 } + skipped.map(\.key)
    }

    // MARK: keys ahead, for other threads

    /// The keys of the peer's next envelopes in its current chain, from `first`, with the
    /// chain key after the last: what relay reader threads open bodies with
    /// (`EnvelopeKeyring`) before the engine's turn. Holding them gives away nothing the
    /// chain key does not; the engine still moves its own ratchet for each, and takes a
    /// reader's opening only when its own key is the same.
    public struct Lookahead: Sendable {
        public let publicKey: [UInt8]
        public let first: UInt32
        public let keys: [SecretBytes]
        let chain: SecretBytes
    }

    /// The fewest keys ahead a receiving chain gets (`lookahead`).
    public static let fewestAhead = 16

    /// Keys from where the receiving chain stands now — twice as many as it has taken
    /// (at least `fewest`, at most `maximum`: a chain that carries a backlog gets a window
    /// that keeps the readers ahead, one that carries a reply or two costs a few hashes) —
    /// continuing `cache` (the last one made) where it still fits, so each key is derived
    /// once; nil without a receiving chain.
    public func lookahead(upTo maximum: Int, continuing cache: Lookahead?) -> Lookahead? {
        let count = min(maximum, max(Self.fewestAhead, 2 * Int(received)))
        guard let remote, let receiveChain, count > 0 else { return nil }
        var keys: [SecretBytes], chain: SecretBytes
        if let cache, cache.publicKey == remote, cache.first <= received, Int(received - cache.first) <= cache.keys.count {
            keys = Array(cache.keys.dropFirst(Int(received - cache.first)))
            chain = cache.chain
        } else {
            keys = []
            chain = receiveChain
        }
        keys.reserveCapacity(count)
        while keys.count < count {
            let (message, next) = Self.chainStep(chain)
            keys.append(message)
            chain = next
        }
        return Lookahead(publicKey: remote, first: received, keys: keys, chain: chain)
    }

    // MARK: bytes

    /// Layout (big-endian): 32 root ‖ 32 my ratchet secret key ‖ u8 0/1 ‖ 32 peer's ratchet
    /// key ‖ u8 0/1 ‖ 32 sending chain ‖ u8 0/1 ‖ 32 receiving chain ‖ u32 sent ‖ u32
    /// received ‖ u32 previous count ‖ u8 a step owed (0/1) ‖ u16 n ‖ n × 32 former peer keys ‖ u16 m ‖ m × (32
    /// peer key ‖ u32 number ‖ 32 message key ‖ i64 kept at) ‖ u16 k ‖ k × (32 peer key ‖ u32
    /// number) of keys dropped.
    var serializedCount: Int {
        32 + 32 + 3 + (remote == nil ? 0 : 32) + (sendChain == nil ? 0 : 32) + (receiveChain == nil ? 0 : 32) + 12 + 1
            + 2 + formerRemotes.count * 32 + 2 + skipped.count * (32 + 4 + 32 + 8) + 2 + dropped.count * 36
    }

    func write(to w: inout FixedWriter) {
        w.secret(root)
        w.secret(mine.secretKey)
        if let remote { w.u8(1); w.raw(remote) } else { w.u8(0) }
        for chain in [sendChain, receiveChain] {
            if let chain { w.u8(1); w.secret(chain) } else { w.u8(0) }
        }
        w.u32(sent)
        w.u32(received)
        w.u32(previousCount)
        w.u8(stepOwed ? 1 : 0)
        w.u16(UInt16(formerRemotes.count))
        for key in formerRemotes { w.raw(key) }
        w.u16(UInt16(skipped.count))
        for s in skipped {
            w.raw(s.publicKey)
            w.u32(s.number)
            w.secret(s.key)
            w.u64(UInt64(bitPattern: s.at))
        }
        w.u16(UInt16(dropped.count))
        for d in dropped {
            w.raw(d.publicKey)
            w.u32(d.number)
        }
    }

    init(reading r: inout ByteReader) throws {
        root = try r.secret(32)
        mine = AgreementKey(secretKey: try r.secret(32))
        remote = try r.u8() == 1 ? try r.raw(32) : nil
        sendChain = try r.u8() == 1 ? try r.secret(32) : nil
        receiveChain = try r.u8() == 1 ? try r.secret(32) : nil
        sent = try r.u32()
        received = try r.u32()
        previousCount = try r.u32()
        let owed = try r.u8()
        guard owed <= 1 else { throw SavedSessionStateError.malformed }
        stepOwed = owed == 1
        let former = Int(try r.u16())
        guard former <= Self.formerRemotesKept else { throw SavedSessionStateError.malformed }
        formerRemotes = try (0..<former).map { _ in try r.raw(32) }
        let count = Int(try r.u16())
        guard count <= Self.maxSkipped, sendChain != nil else { throw SavedSessionStateError.malformed }
        skipped = try (0..<count).map { _ in
            Skipped(publicKey: try r.raw(32), number: try r.u32(), key: try r.secret(32), at: Int64(bitPattern: try r.u64()))
        }
        let lost = Int(try r.u16())
        guard lost <= Self.maxSkipped else { throw SavedSessionStateError.malformed }
        dropped = try (0..<lost).map { _ in (try r.raw(32), try r.u32()) }
    }
}
