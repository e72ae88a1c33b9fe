import Glibc

/// A loopback TCP port no one listens on, for a server that must come back on the same
/// port after it was stopped (a NATS server killed and started again in a test).
///
/// It is drawn from below the kernel's ephemeral range (`ip_local_port_range`), where no
/// `bind` to port 0 and no outgoing connection ever lands: a port from that range, free a
/// moment ago, could be handed to any other process's listener while its server is down.
public enum LoopbackPort {
    public static func free() -> UInt16 {
        let low = ephemeralLow()
        let range = max(1_024, low - 12_000)..<max(1_025, low)
        for _ in 0..<1_000 {
            let port = UInt16(Int.random(in: range))
            if bindable(port) { return port }
        }
        return anyPort()
    }

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
    static func ephemeralLow() -> Int {
        guard let file = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r") else { return 32_768 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 64)
        guard fgets(&line, Int32(line.count), file) != nil,
              let first = String(cString: line).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
              let low = Int(first), low > 2_048 else { return 32_768 }
        return low
    }

    private static func bindable(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = loopback(port)
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// What the kernel gives for port 0 (the old way, if nothing below the range is free).
    private static func anyPort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = loopback(0)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = port.bigEndian
        return addr
    }
}
