import CEpoll
import Glibc

/// What a server-side stream tells its owner.
public protocol StreamConnectionDelegate: AnyObject {
    /// A complete frame body arrived.
    func connection(_ connection: StreamConnection, didReceive frame: [UInt8])
    /// The stream broke the framing rules; the connection is closed after this returns.
    func connection(_ connection: StreamConnection, violated error: FrameError)
    /// The peer went away or the connection was closed; called once.
    func connectionDidClose(_ connection: StreamConnection)
}

/// A nonblocking framed TCP stream on an event loop: reads into a frame decoder, queues
/// output and writes it in bulk at the end of the loop iteration.
public final class StreamConnection: EventSource {
    public let fd: Int32
    public unowned let loop: EventLoop
    public weak var delegate: StreamConnectionDelegate?
    private var decoder: FrameDecoder
    public private(set) var outbound = ByteQueue()
    public private(set) var isClosed = false
    private var flushScheduled = false
    private var watchingWritable = false
    /// Reading stops while true: the owner's backpressure (e.g. output piling up).
    public var readingPaused = false {
        didSet { if oldValue != readingPaused { updateInterest() } }
    }
    /// When the frame now being received began to arrive (monotonic), nil between frames.
    public private(set) var partialFrameSince: Double?
    public let openedAt: Double

    /// The loop's read buffer, shared by its connections: they all read on its thread.
    private let scratch: UnsafeMutableRawBufferPointer

    public init(fd: Int32, loop: EventLoop, maximumFrameBytes: Int) throws(NetError) {
        self.fd = fd
        self.loop = loop
        decoder = FrameDecoder(maximumBodyBytes: maximumFrameBytes)
        scratch = loop.readBuffer
        openedAt = loop.now
        _ = rchat_set_nodelay(fd)
        try loop.register(fd, events: Readiness.readable | RCHAT_EPOLLRDHUP, source: self)
    }

    public var outboundBytes: Int { outbound.count }

    /// Queues one frame for the end-of-iteration flush.
    public func send(_ body: [UInt8]) {
        guard !isClosed else { return }
        FrameCodec.append(body, to: &outbound)
        scheduleFlush()
    }

    /// Queues bytes exactly as given (tests use this to misbehave on purpose).
    public func sendRaw(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        outbound.append(contentsOf: bytes)
        scheduleFlush()
    }

    private func scheduleFlush() {
        if !flushScheduled {
            flushScheduled = true
            loop.needsFlush(self)
        }
    }

    public func handleEvents(_ events: UInt32) {
        if events & Readiness.writable != 0 { flush() }
        if events & (Readiness.readable | Readiness.error | Readiness.hangUp) != 0, !readingPaused || events & Readiness.error != 0 {
            readAvailable()
        }
    }

    private func readAvailable() {
        // A bounded number of reads per wake-up keeps one busy client from starving others.
        for _ in 0..<4 {
            guard !isClosed, !readingPaused else { return }
            let n = Glibc.read(fd, scratch.baseAddress!, scratch.count)
            if n > 0 {
                decoder.append(UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
                drainFrames()
                if n < scratch.count { return }
            } else if n == 0 {
                close()
                return
            } else {
                let e = rchat_errno()
                if e == EAGAIN || e == EWOULDBLOCK || e == EINTR { return }
                close()
                return
            }
        }
    }

    private func drainFrames() {
        while !isClosed {
            do {
                guard let frame = try decoder.next() else { break }
                delegate?.connection(self, didReceive: frame)
            } catch {
                delegate?.connection(self, violated: error)
                close()
                return
            }
        }
        partialFrameSince = decoder.bufferedBytes == 0 ? nil : (partialFrameSince ?? loop.now)
    }

    /// Writes as much queued output as the socket takes; watches for writability if some is left.
    public func flush() {
        flushScheduled = false
        guard !isClosed else { return }
        while !outbound.isEmpty {
            let n = outbound.withUnreadBytes { rchat_send(fd, $0.baseAddress!, $0.count) }
            if n > 0 {
                outbound.consume(n)
            } else {
                let e = rchat_errno()
                if n < 0 && e == EINTR { continue }
                if n < 0 && (e == EAGAIN || e == EWOULDBLOCK) { break }
                close()
                return
            }
        }
        let wantWritable = !outbound.isEmpty
        if wantWritable != watchingWritable {
            watchingWritable = wantWritable
            updateInterest()
        }
    }

    private func updateInterest() {
        guard !isClosed else { return }
        var events: UInt32 = RCHAT_EPOLLRDHUP
        if !readingPaused { events |= Readiness.readable }
        if watchingWritable { events |= Readiness.writable }
        loop.modify(fd, events: events)
    }

    /// Closes without writing what is queued (it reports work that did not become durable).
    public func abandon() {
        outbound.removeAll()
        close()
    }

    /// Writes what can be written now, then closes. Idempotent; tells the delegate once.
    public func close() {
        guard !isClosed else { return }
        if !outbound.isEmpty {
            _ = outbound.withUnreadBytes { rchat_send(fd, $0.baseAddress!, $0.count) }
        }
        isClosed = true
        outbound.removeAll()
        decoder.reset()
        loop.closeLater(fd)
        delegate?.connectionDidClose(self)
    }
}
