import Foundation
import RChatCore
import RChatCrypto
import RChatNet
import RChatWire

/// An authenticated connection to a relay, for the engine and for tools.
///
/// `connect` does the handshake and proves the mailbox key, then a reader thread decodes
/// what the relay sends. Events go either to the `eventHandler` given to `connect` (called
/// on the reader thread, in order — the fast path) or, without one, to a queue read with
/// `nextEvent(timeout:)`. Sends are thread-safe; each returns its sequence number, which
/// comes back in `.sent` / `.refused`. To pipeline, send with `flush: false` and call
/// `flush()` once per batch; `waitForOutstandingSends(atMost:)` keeps a window.
///
/// No send ever waits for the relay. `flush()` writes what the kernel takes at once and
/// leaves the rest to a writer thread; a bulk sender asks `hasRoom()` before each item and
/// waits for `whenWritable` once more than `backlogBytes` are queued. The connection is
/// given up (`.closed` with the reason, as for any lost connection) when more than
/// `maximumQueuedBytes` are queued or when the relay takes no byte for `stallTimeout`
/// seconds while some wait: a relay that stops reading costs a reconnect, never a thread.
///
/// `@unchecked Sendable`: the sending side's state is guarded by `sendLock` and the waiters'
/// by `state`, both `NSCondition`s because the writer thread and `nextEvent` wait on them
/// (`Mutex` has no wait); `receiveCipher` and `decoder` are the reader thread's alone.
public final class RelayClient: @unchecked Sendable {
    /// Sealed bytes not yet taken by the kernel above which `hasRoom()` says no: 4 MiB.
    public static let backlogBytes = 4 << 20
    /// Sealed bytes not yet taken by the kernel above which the connection is given up:
    /// 16 MiB (what `hasRoom()` lets through, plus room for the small frames sent without
    /// asking: acknowledgements, codes, handshakes).
    public static let maximumQueuedBytes = 16 << 20

    public let address: RelayAddress
    public let mailbox: MailboxID
    /// The relay's clock at connect (unix seconds) and how many items it held for us then.
    public let relayTime: Int64
    public let heldAtConnect: Int

    private let socket: BlockingSocket
    private let handler: (@Sendable (RelayEvent) -> Void)?
    private let whenWritable: (@Sendable () -> Void)?
    private let stallTimeout: Double

    // Sending side: one lock over the send cipher, the sequence counter and the bytes
    // queued; the writer thread waits on it for bytes the kernel did not take at once.
    private let sendLock = NSCondition()
    private var sendCipher: TransportCipher
    private var nextSeq: UInt64 = 1
    /// Sealed frames not yet handed to the writer thread.
    private var pending = ByteQueue()
    /// Bytes the writer thread holds and has not written yet (0 while it is idle).
    private var writerBytes = 0
    private var writerBusy = false
    /// `hasRoom()` said no: `whenWritable` is owed once the backlog is down to half.
    private var backedUp = false
    private var sendFailure: RelayClientError?
    /// Why the writing side gave the connection up (reported in `.closed`).
    private var writeFailure: RelayClientError?

    // Receiving side (reader thread) and what other threads wait on.
    private var receiveCipher: TransportCipher
    private var decoder = FrameDecoder(maximumBodyBytes: RelayProtocol.maximumFrameBytes)
    private let state = NSCondition()
    private var queue: [RelayEvent] = []
    private var queueHead = 0
    private var outstanding = 0
    private var finished = false
    private var closedByUs = false

    private init(address: RelayAddress, mailbox: MailboxID, relayTime: Int64, held: Int, socket: BlockingSocket,
                 cipher: TransportCipher, leftover: FrameDecoder, handler: (@Sendable (RelayEvent) -> Void)?,
                 whenWritable: (@Sendable () -> Void)?, stallTimeout: Double) {
        self.address = address
        self.mailbox = mailbox
        self.relayTime = relayTime
        heldAtConnect = held
        self.socket = socket
        sendCipher = cipher
        receiveCipher = cipher
        decoder = leftover
        self.handler = handler
        self.whenWritable = whenWritable
        self.stallTimeout = stallTimeout
    }

    /// Connects, agrees keys with the relay's pinned static key and proves `mailboxKey`;
    /// from the numeric address `source` when one is given. `whenWritable` (called on the
    /// writer thread) follows a `hasRoom()` that said no, once the backlog is down to half;
    /// `stallTimeout`: seconds the relay may take no byte of what is queued before the
    /// connection is given up.
    public static func connect(to address: RelayAddress, mailboxKey: SigningKey, timeout: Double = 10, from source: String? = nil,
                               stallTimeout: Double = 30, eventHandler: (@Sendable (RelayEvent) -> Void)? = nil,
                               whenWritable: (@Sendable () -> Void)? = nil) throws(RelayClientError) -> RelayClient {
        let socket: BlockingSocket
        do { socket = try BlockingSocket(host: address.host, port: address.port, from: source) } catch { throw .connectFailed(error.description) }
        socket.setReceiveTimeout(timeout)
        var reader = HandshakeReader(socket: socket, deadline: monotonicSeconds() + timeout)

        let ephemeral = AgreementKey.generate()
        do { try socket.writeAll(FrameCodec.encode(RelayHandshake.hello(ephemeral: ephemeral.publicKey))) } catch {
            throw .connectFailed(error.description)
        }
        let relayHello = try reader.nextFrame()
        if relayHello.count == 2, relayHello[0] == 0xEE { throw .relayError(RelayErrorCode(rawValue: relayHello[1])) }
        var cipher: TransportCipher
        let transcript: [UInt8]
        do { (cipher, transcript) = try RelayHandshake.clientCipher(ephemeral: ephemeral, relayStatic: address.publicKey, relayHello: relayHello) } catch {
            throw .handshakeFailed(error.description)
        }
        guard case .challenge(let challenge)? = try reader.nextMessage(&cipher) else { throw .protocolViolation("expected a challenge") }
        let signature = mailboxKey.sign(RelayHandshake.authMessage(transcript: transcript, challenge: challenge))
        let auth = cipher.seal(ClientMessage.auth(mailboxKey: mailboxKey.publicKey, signature: signature).encoded())
        do { try socket.writeAll(FrameCodec.encode(auth)) } catch { throw .connectionLost(error.description) }
        let message = try reader.nextMessage(&cipher)
        guard case .welcome(let mailbox, let time, let held)? = message else {
            if case .error(let code)? = message { throw .relayError(RelayErrorCode(rawValue: code)) }
            throw .protocolViolation("expected welcome")
        }
        guard mailbox == MailboxID(publicKey: mailboxKey.publicKey) else { throw .protocolViolation("welcome names another mailbox") }
        socket.setReceiveTimeout(0)
        let client = RelayClient(address: address, mailbox: mailbox, relayTime: time, held: Int(held), socket: socket,
                                 cipher: cipher, leftover: reader.decoder, handler: eventHandler,
                                 whenWritable: whenWritable, stallTimeout: stallTimeout)
        client.startThreads()
        return client
    }

    // MARK: sending

    /// Presents up to 16 rendezvous codes (32 bytes each) to be linked.
    public func present(_ codes: [[UInt8]], flush: Bool = true) throws(RelayClientError) {
        precondition(!codes.isEmpty && codes.count <= RelayProtocol.maximumCodesPerPresent && codes.allSatisfy { $0.count == rendezvousCodeBytes })
        try enqueue(.present(codes), flush: flush)
    }

    /// Registers the invite tokens up to 16 salts derive for this mailbox: requests sent to
    /// them are held for it. Returns those tokens.
    @discardableResult
    public func registerInvites(salts: [[UInt8]], flush: Bool = true) throws(RelayClientError) -> [InviteToken] {
        precondition(!salts.isEmpty && salts.count <= RelayProtocol.maximumInvitesPerRegister
                     && salts.allSatisfy { $0.count == InviteToken.saltBytes })
        try enqueue(.registerInvites(salts: salts), flush: flush)
        return salts.map { InviteToken.derived(mailbox: mailbox, salt: $0) }
    }

    /// Hands the mailbox of `old` over to this connection's mailbox: the relay moves what it
    /// holds for it here and drops its invites.
    public func moveMailbox(from old: SigningKey, flush: Bool = true) throws(RelayClientError) {
        let signature = old.sign(MailboxMove.statement(from: MailboxID(publicKey: old.publicKey), to: mailbox))
        try enqueue(.moveMailbox(oldKey: old.publicKey, signature: signature), flush: flush)
    }

    /// Sends `payload` on `link`; returns the sequence number its `.sent`/`.refused` will carry.
    /// `ahead`: the peer gets it before what its mailbox already holds (handshake messages).
    @discardableResult
    public func send(on link: LinkID, _ payload: [UInt8], ahead: Bool = false, flush: Bool = true) throws(RelayClientError) -> UInt64 {
        precondition(payload.count <= RelayProtocol.maximumPayloadBytes)
        return try enqueueNumbered(flush: flush) {
            ahead ? .sendAhead(seq: $0, link: link, payload: payload) : .send(seq: $0, link: link, payload: payload)
        }
    }

    /// Sends a sealed message request to whoever registered `token`.
    @discardableResult
    public func sendRequest(to token: InviteToken, _ payload: [UInt8], flush: Bool = true) throws(RelayClientError) -> UInt64 {
        precondition(payload.count <= RelayProtocol.maximumPayloadBytes)
        return try enqueueNumbered(flush: flush) { .request(seq: $0, token: token, payload: payload) }
    }

    /// "I stored it": the relay may delete these items.
    public func acknowledge(_ ids: [HeldItemID], flush: Bool = true) throws(RelayClientError) {
        var rest = ids[...]
        while !rest.isEmpty {
            let chunk = Array(rest.prefix(RelayProtocol.maximumAcknowledgementsPerFrame))
            rest = rest.dropFirst(chunk.count)
            try enqueue(.acknowledge(chunk), flush: false)
        }
        if flush { try self.flush() }
    }

    public func ping(_ value: UInt64 = 0) throws(RelayClientError) {
        try enqueue(.ping(value), flush: true)
    }

    /// Gives `link` up (`ClientMessage.leave`): the relay forgets it and tells the peer.
    public func leave(_ link: LinkID) throws(RelayClientError) {
        try enqueue(.leave(link: link), flush: true)
    }

    /// Writes everything queued with `flush: false`.
    public func flush() throws(RelayClientError) {
        sendLock.lock()
        defer { sendLock.unlock() }
        try flushLocked()
    }

    private func enqueue(_ message: ClientMessage, flush: Bool) throws(RelayClientError) {
        sendLock.lock()
        defer { sendLock.unlock() }
        try appendLocked(message)
        if flush { try flushLocked() }
    }

    private func enqueueNumbered(flush: Bool, _ make: (UInt64) -> ClientMessage) throws(RelayClientError) -> UInt64 {
        sendLock.lock()
        defer { sendLock.unlock() }
        let seq = nextSeq
        try appendLocked(make(seq))
        nextSeq += 1
        state.lock(); outstanding += 1; state.unlock()
        if flush { try flushLocked() }
        return seq
    }

    private func appendLocked(_ message: ClientMessage) throws(RelayClientError) {
        if let sendFailure { throw sendFailure }
        FrameCodec.append(sendCipher.seal(message.encoded()), to: &pending)
        let queued = queuedLocked
        if queued > Self.maximumQueuedBytes {
            giveUpLocked(.connectionLost("the relay stopped reading (\(queued) bytes waiting)"))
            throw sendFailure!
        }
    }

    /// Writes what the kernel takes now; the writer thread takes the rest. Never waits.
    private func flushLocked() throws(RelayClientError) {
        if let sendFailure { throw sendFailure }
        guard !pending.isEmpty else { return }
        if !writerBusy {
            // Nothing is being written: these are the next bytes on the stream.
            var failure: NetError?
            while !pending.isEmpty {
                let n = pending.withUnreadBytes { bytes -> Int in
                    do throws(NetError) { return try socket.writeAvailable(bytes) } catch { failure = error; return 0 }
                }
                if n == 0 { break }
                pending.consume(n)
            }
            if let failure {
                giveUpLocked(.connectionLost(failure.description))
                throw sendFailure!
            }
        }
        if !pending.isEmpty { sendLock.broadcast() }
    }

    /// Bytes sealed and not yet taken by the kernel.
    private var queuedLocked: Int { pending.count + writerBytes }

    /// Bytes sealed and not yet taken by the kernel (what a relay that stopped reading holds up).
    public var queuedBytes: Int { sendLock.lock(); defer { sendLock.unlock() }; return queuedLocked }

    /// Whether a bulk sender may queue more now. Above `backlogBytes` it first writes what
    /// the kernel takes; if that is not enough the answer is no, and `whenWritable` is
    /// called once the backlog is down to half. False once the connection failed.
    public func hasRoom() -> Bool {
        sendLock.lock()
        defer { sendLock.unlock() }
        guard sendFailure == nil else { return false }
        if queuedLocked < Self.backlogBytes { return true }
        _ = try? flushLocked()
        if queuedLocked < Self.backlogBytes { return true }
        backedUp = true
        return false
    }

    /// The writing side ends the connection: the reader sees it closed and reports `reason`.
    private func giveUpLocked(_ reason: RelayClientError) {
        if sendFailure == nil { sendFailure = reason }
        if writeFailure == nil { writeFailure = reason }
        sendLock.broadcast()
        socket.shutdown()
    }

    /// The writer thread: writes what `flush` left, waiting for the socket to take it, and
    /// gives the connection up when the relay takes nothing for `stallTimeout` seconds.
    private func writeLoop() {
        sendLock.lock()
        defer { sendLock.unlock() }
        while true {
            while pending.isEmpty && sendFailure == nil { sendLock.wait() }
            if sendFailure != nil { return }
            var chunk = pending
            pending = ByteQueue()
            writerBusy = true
            writerBytes = chunk.count
            sendLock.unlock()
            var failure: RelayClientError?
            var notify = false
            while !chunk.isEmpty {
                guard socket.waitWritable(seconds: stallTimeout) else {
                    failure = .connectionLost("the relay read nothing for \(Int(stallTimeout)) s (\(chunk.count) bytes waiting)")
                    break
                }
                var error: NetError?
                let n = chunk.withUnreadBytes { bytes -> Int in
                    do throws(NetError) { return try socket.writeAvailable(bytes) } catch let e { error = e; return 0 }
                }
                if let error { failure = .connectionLost(error.description); break }
                chunk.consume(n)
                sendLock.lock()
                writerBytes = chunk.count
                notify = takeWritableLocked()
                sendLock.unlock()
                if notify { whenWritable?() }
            }
            sendLock.lock()
            writerBusy = false
            writerBytes = 0
            if let failure {
                giveUpLocked(failure)
                return
            }
            if takeWritableLocked() {
                sendLock.unlock()
                whenWritable?()
                sendLock.lock()
            }
        }
    }

    /// Whether `whenWritable` is owed now (and no longer).
    private func takeWritableLocked() -> Bool {
        guard backedUp, queuedLocked <= Self.backlogBytes / 2 else { return false }
        backedUp = false
        return true
    }

    // MARK: receiving

    /// The next event, waiting up to `timeout` seconds; nil on timeout. Only without an
    /// event handler. After `.closed` it keeps returning `.closed`.
    public func nextEvent(timeout: Double) -> RelayEvent? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        state.lock()
        defer { state.unlock() }
        while queueHead == queue.count {
            if finished { return .closed(.closed) }
            if !state.wait(until: deadline) { return nil }
        }
        let event = queue[queueHead]
        queueHead += 1
        if queueHead == queue.count { queue.removeAll(keepingCapacity: true); queueHead = 0 }
        return event
    }

    /// Sends not yet answered by `.sent` or `.refused`.
    public var outstandingSends: Int { state.lock(); defer { state.unlock() }; return outstanding }

    /// Waits until at most `limit` sends are unanswered; false on timeout or close.
    public func waitForOutstandingSends(atMost limit: Int, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        state.lock()
        defer { state.unlock() }
        while outstanding > limit {
            if finished || !state.wait(until: deadline) { return outstanding <= limit }
        }
        return true
    }

    public var isClosed: Bool { state.lock(); defer { state.unlock() }; return finished }

    /// Closes the connection; the reader ends with `.closed(nil)`.
    public func close() {
        state.lock(); closedByUs = true; state.unlock()
        socket.shutdown()
    }

    private func startThreads() {
        let reader = Thread { [self] in
            ThreadName.setCurrent("relay-reader")
            readLoop()
        }
        reader.name = "relay-reader"
        reader.start()
        let writer = Thread { [self] in
            ThreadName.setCurrent("relay-writer")
            writeLoop()
        }
        writer.name = "relay-writer"
        writer.start()
    }

    private func readLoop() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        var failure: RelayClientError?
        reading: while true {
            do throws(RelayClientError) {
                while let frame = try nextBufferedFrame() {
                    let body: [UInt8]
                    do { body = try receiveCipher.open(frame) } catch { throw .protocolViolation("a frame failed to decrypt") }
                    guard let message = RelayMessage.decode(body) else { throw .protocolViolation("malformed frame") }
                    if case .error(let code) = message { throw .relayError(RelayErrorCode(rawValue: code)) }
                    guard let event = Self.event(for: message) else { throw .protocolViolation("unexpected frame") }
                    deliver(event)
                }
            } catch {
                failure = error
                break reading
            }
            let n: Int
            do { n = try socket.read(into: buffer) } catch { failure = .connectionLost(error.description); break }
            if n == 0 { failure = .connectionLost("closed by the relay"); break }
            decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        state.lock()
        let byUs = closedByUs
        state.unlock()
        socket.shutdown()
        sendLock.lock()
        if sendFailure == nil { sendFailure = .closed }
        // The writing side gave up first: what the reader saw is only its consequence.
        if case .connectionLost? = failure, let writeFailure { failure = writeFailure }
        sendLock.broadcast()
        sendLock.unlock()
        deliver(.closed(byUs ? nil : failure), last: true)
    }

    private func nextBufferedFrame() throws(RelayClientError) -> [UInt8]? {
        do { return try decoder.next() } catch { throw .protocolViolation(error.description) }
    }

    private func deliver(_ event: RelayEvent, last: Bool = false) {
        var answered = false
        switch event {
        case .sent, .refused: answered = true
        default: break
        }
        if let handler {
            if answered || last {
                state.lock()
                if answered { outstanding -= 1 }
                if last { finished = true }
                state.broadcast()
                state.unlock()
            }
            handler(event)
        } else {
            state.lock()
            if answered { outstanding -= 1 }
            if last { finished = true }
            queue.append(event)
            state.broadcast()
            state.unlock()
        }
    }

    /// The event a relay message after the handshake stands for (nil: not one after it).
    public static func event(for message: RelayMessage) -> RelayEvent? {
        switch message {
        case .linked(let link, let code): return .linked(link: link, code: code)
        case .peerGone(let link): return .peerGone(link: link)
        case .sent(let seq, let forwarded): return .sent(seq: seq, forwarded: forwarded)
        case .refused(let seq, let reason): return .refused(seq: seq, reason: RefusalReason(rawValue: reason) ?? .relayFull)
        case .deliver(let d): return .delivery(d)
        case .drained: return .drained
        case .pong(let v): return .pong(v)
        case .challenge, .welcome, .error: return nil
        }
    }
}

/// Blocking reads for the handshake, before the reader thread exists.
struct HandshakeReader {
    let socket: BlockingSocket
    let deadline: Double
    var decoder = FrameDecoder(maximumBodyBytes: RelayProtocol.maximumFrameBytes)

    init(socket: BlockingSocket, deadline: Double) {
        self.socket = socket
        self.deadline = deadline
    }

    mutating func nextFrame() throws(RelayClientError) -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            do {
                if let frame = try decoder.next() { return frame }
            } catch {
                throw .protocolViolation(error.description)
            }
            guard monotonicSeconds() < deadline else { throw .timedOut }
            let n: Int
            do { n = try socket.read(into: buffer) } catch {
                throw error.code == EAGAIN || error.code == EWOULDBLOCK ? .timedOut : .connectionLost(error.description)
            }
            if n == 0 { throw .connectionLost("closed by the relay during the handshake") }
            decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// The next sealed message; a plaintext error frame is reported as `.error`.
    mutating func nextMessage(_ cipher: inout TransportCipher) throws(RelayClientError) -> RelayMessage? {
        let frame = try nextFrame()
        if frame.count == 2, frame[0] == 0xEE { return .error(frame[1]) }
        guard let body = try? cipher.open(frame) else { throw .protocolViolation("a frame failed to decrypt") }
        return RelayMessage.decode(body)
    }
}
