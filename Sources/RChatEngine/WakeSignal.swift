import Foundation
import RChatCore
import RChatCrypto
#if canImport(Glibc)
import Glibc
#endif

/// The local wake-up: `rchat send`, `read` and `resend` write to the store, then poke the
/// engine running on the same home so it acts within a moment instead of polling. A Linux
/// abstract-namespace datagram socket named after the home: no file to clean up after a
/// crash, and a poke with nobody listening simply goes nowhere.
public enum WakeSignal {
    static func address(home: String) -> sockaddr_un {
        // Every spelling of the same home (relative, through a symlink) names one socket.
        let real = URL(fileURLWithPath: home).standardizedFileURL.resolvingSymlinksInPath().path
        let name = "rchat-engine-" + Hex.encode(Hash.blake2b(Array(real.utf8), outputBytes: 16))
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { path in
            path[0] = 0 // abstract namespace
            for (i, b) in name.utf8.enumerated() { path[i + 1] = b }
        }
        return addr
    }

    static func length(of name: String) -> socklen_t {
        socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.utf8.count)
    }

    static var nameLength: socklen_t { length(of: "rchat-engine-" + String(repeating: "0", count: 32)) }

    /// Tells a running engine on `home` to look at the store again. Never blocks or fails.
    public static func poke(home: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var addr = address(home: home)
        var byte: UInt8 = 1
        _ = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, &byte, 1, 0, $0, nameLength) }
        }
    }
}

/// The engine's end of the wake-up: a thread that turns each poke into a call.
final class WakeListener: @unchecked Sendable {
    private let fd: Int32

    init?(home: String, onWake: @escaping @Sendable () -> Void) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = WakeSignal.address(home: home)
        let bound = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, WakeSignal.nameLength) }
        }
        guard bound == 0 else { close(fd); return nil }
        self.fd = fd
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                if buffer[0] == 0 { return } // stop
                onWake()
            }
        }
        thread.name = "rchat-wake"
        thread.start()
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
