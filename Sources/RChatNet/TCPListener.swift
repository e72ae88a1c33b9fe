import CEpoll
import Glibc

/// A listening TCP socket on the event loop that hands each accepted descriptor, with the
/// host it came from, to `onAccept`. When the process runs out of descriptors it accepts and drops the waiting
/// client with a spare descriptor instead of spinning on a listener that stays readable.
public final class TCPListener: EventSource {
    public let fd: Int32
    public let port: UInt16
    public unowned let loop: EventLoop
    public var onAccept: (Int32, HostAddress) -> Void = { fd, _ in Glibc.close(fd) }
    /// Called when a client had to be dropped because no descriptor was left.
    public var onDescriptorsExhausted: () -> Void = {}
    private var spareFD: Int32

    public init(host: String, port: UInt16, loop: EventLoop, backlog: Int32 = 1024) throws(NetError) {
        let fd = rchat_tcp_open(host, String(port), 1, backlog)
        guard fd >= 0 else { throw NetError("listen on \(host):\(port)", code: fd == -2 ? -2 : rchat_errno()) }
        _ = rchat_set_nonblocking(fd)
        let actual = rchat_local_port(fd)
        guard actual > 0 else { Glibc.close(fd); throw NetError("getsockname") }
        self.fd = fd
        self.port = UInt16(actual)
        self.loop = loop
        spareFD = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        try loop.register(fd, events: Readiness.readable, source: self)
    }

    public func handleEvents(_ events: UInt32) {
        var peer = (UInt64(0), UInt64(0))
        for _ in 0..<64 {
            let client = withUnsafeMutableBytes(of: &peer) { rchat_accept_peer(fd, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
            if client >= 0 {
                onAccept(client, withUnsafeBytes(of: peer) { HostAddress(bytes: $0) })
                continue
            }
            let e = rchat_errno()
            if e == EMFILE || e == ENFILE, spareFD >= 0 {
                Glibc.close(spareFD)
                let dropped = rchat_accept(fd)
                if dropped >= 0 { Glibc.close(dropped) }
                spareFD = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
                onDescriptorsExhausted()
                continue
            }
            return
        }
    }

    public func close() {
        loop.closeLater(fd)
        if spareFD >= 0 { Glibc.close(spareFD); spareFD = -1 }
    }
}
