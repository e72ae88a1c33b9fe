import CEpoll
import Glibc

/// A blocking TCP client socket: the client library runs it from its own threads.
public final class BlockingSocket: Sendable {
    public let fd: Int32

    /// Connects to host:port (names resolve through getaddrinfo), from the numeric address
    /// `source` when one is given (e.g. 127.0.0.2: another host, as a relay counts them).
    public init(host: String, port: UInt16, from source: String? = nil) throws(NetError) {
        let fd = source.map { rchat_tcp_connect_from(host, String(port), $0) } ?? rchat_tcp_open(host, String(port), 0, 0)
        guard fd >= 0 else { throw NetError("connect to \(host):\(port)" + (source.map { " from \($0)" } ?? ""), code: fd == -2 ? -2 : rchat_errno()) }
        _ = rchat_set_nodelay(fd)
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// Writes every byte, or throws.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(NetError) {
        var offset = 0
        while offset < bytes.count {
            let n = rchat_send(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n > 0 { offset += n; continue }
            if n < 0 && rchat_errno() == EINTR { continue }
            throw NetError("send")
        }
    }

    public func writeAll(_ bytes: [UInt8]) throws(NetError) {
        let failure = bytes.withUnsafeBytes { p -> NetError? in
            do throws(NetError) { try writeAll(p); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Writes what the socket takes now, without waiting: how many bytes (0 when its buffer
    /// is full).
    public func writeAvailable(_ bytes: UnsafeRawBufferPointer) throws(NetError) -> Int {
        guard bytes.count > 0 else { return 0 }
        while true {
            let n = Glibc.send(fd, bytes.baseAddress!, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            if n >= 0 { return n }
            let code = rchat_errno()
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return 0 }
            throw NetError("send", code: code)
        }
    }

    /// Waits until the socket takes more bytes, or has failed (a write then says how);
    /// false when `seconds` pass first.
    public func waitWritable(seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let deadline = monotonicSeconds() + seconds
        while true {
            let n = poll(&entry, 1, Int32(max(0, (deadline - monotonicSeconds()) * 1000).rounded(.up)))
            if n > 0 { return true }
            if n == 0 { return false }
            if rchat_errno() != EINTR { return true }
        }
    }

    /// Reads what is available (blocking until something is); 0 at end of stream.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(NetError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress!, buffer.count)
            if n >= 0 { return n }
            if rchat_errno() == EINTR { continue }
            throw NetError("read")
        }
    }

    /// Stops both directions; a reader blocked in `read` returns 0.
    public func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Sets a receive timeout (seconds), so a blocking read gives up.
    public func setReceiveTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
}
