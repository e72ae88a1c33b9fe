import Foundation
import RChatCore
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on loopback in front of a real relay that forwards every byte both ways as it
/// comes and records every relay-protocol frame it sees: its connection, direction, length
/// on the wire (the 4-byte length prefix included) and time — what anyone on the network
/// between a client and its relay can learn. Stopped by `stop()` (its sockets closed, its
/// threads end on their own).
final class RecordingProxy: Sendable {
    struct Frame: Sendable {
        /// The proxied connection, numbered from 1 in the order accepted.
        let connection: Int
        let fromClient: Bool
        let wireBytes: Int
        /// Seconds since the proxy started.
        let at: Double
        /// The frame's number in its connection and direction, from 0 (0 is the plaintext hello).
        let index: Int
    }

    let port: Int
    private let listener: Int32
    private let started = Date()
    private let recorded = Locked<[Frame]>([])
    private let sockets = Locked<[Int32]>([])
    private let stopped = Locked(false)
    /// Per connection, how many of its two pumps ended: the second closes both sockets.
    private let ended = Locked<[Int: Int]>([:])

    /// Listens on 127.0.0.1 (a free port) and forwards to 127.0.0.1:`relayPort`.
    init(relayPort: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProxyError("socket: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 64) == 0 else { close(fd); throw ProxyError("bind/listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop(relayPort: relayPort) }
        thread.name = "recording-proxy"
        thread.start()
    }

    /// The relay address as clients write it, with the proxy's port in place of the relay's.
    func address(for relayAddress: String) -> String {
        let parts = relayAddress.split(separator: "/", maxSplits: 1)
        return "127.0.0.1:\(port)" + (parts.count > 1 ? "/" + parts[1] : "")
    }

    var frames: [Frame] { recorded.withLock { $0 } }

    /// Closes the listener and every proxied connection.
    func stop() {
        guard !stopped.withLock({ let was = $0; $0 = true; return was }) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in sockets.withLock({ $0 }) { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop(relayPort: Int) {
        var number = 0
        while !stopped.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: relayPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { close(client); close(upstream); continue }
            number += 1
            sockets.withLock { $0 += [client, upstream] }
            let n = number
            let up = Thread { [self] in pump(from: client, to: upstream, connection: n, fromClient: true) }
            let down = Thread { [self] in pump(from: upstream, to: client, connection: n, fromClient: false) }
            up.start()
            down.start()
        }
    }

    /// Forwards bytes as they come and records each whole frame; at the end of either side,
    /// ends both.
    private func pump(from source: Int32, to sink: Int32, connection: Int, fromClient: Bool) {
        var pending: [UInt8] = []
        var index = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        defer {
            shutdown(source, Int32(SHUT_RDWR))
            shutdown(sink, Int32(SHUT_RDWR))
            if ended.withLock({ $0[connection, default: 0] += 1; return $0[connection]! }) == 2 {
                sockets.withLock { $0.removeAll { $0 == source || $0 == sink } }
                close(source)
                close(sink)
            }
        }
        while true {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            var written = 0
            while written < n {
                let w = buffer.withUnsafeBytes { send(sink, $0.baseAddress! + written, n - written, Int32(MSG_NOSIGNAL)) }
                if w < 0 && errno == EINTR { continue }
                guard w > 0 else { return }
                written += w
            }
            pending += buffer[0..<n]
            let at = Date().timeIntervalSince(started)
            while pending.count >= 4 {
                let length = Int(pending[0]) << 24 | Int(pending[1]) << 16 | Int(pending[2]) << 8 | Int(pending[3])
                guard pending.count >= 4 + length else { break }
                let frame = Frame(connection: connection, fromClient: fromClient, wireBytes: 4 + length, at: at, index: index)
                recorded.withLock { $0.append(frame) }
                index += 1
                pending.removeFirst(4 + length)
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

struct ProxyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
