import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The local wake-up: `rchat send`, `read`, `resend`, `add` and `keys rotate` write to the
/// store, then poke the engine running on the same home so that it acts within a moment.
///
/// A datagram socket file, `engine.wake`, inside the home. Who may use it is decided by the
/// file system, not by checking each sender's credentials: the listener runs only in a home
/// of mode 0700 owned by this user, and makes the socket 0600, so no other user can reach
/// it or bind its name first (an abstract socket name, which has no permissions, could be
/// taken or flooded by anyone on the machine).
///
/// A datagram means only "look at the store": its bytes are never read (empty, random or
/// large ones alike), and pokes that arrive while a look is pending make one look. A poke
/// with nobody listening goes nowhere; the engine also looks at the store every few seconds
/// when another process changed it (`Engine.storeLookInterval`), so a lost poke only delays.
public enum WakeSignal {
    public static let fileName = "engine.wake"

    public static func path(home: String) -> String { "\(home)/\(fileName)" }

    /// Tells a running engine on `home` to look at the store again. Never blocks or fails.
    public static func poke(home: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var byte: UInt8 = 1
        _ = withAddress(home: home) { address, length in sendto(fd, &byte, 1, 0, address, length) }
    }

    /// `sun_path` bytes, the terminating NUL included.
    static var pathCapacity: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) }

    /// Calls `body` with the socket's address. A path longer than `sun_path` holds is named
    /// through the home directory opened here, `/proc/self/fd/N/engine.wake`, which the
    /// kernel resolves to the same file (no `chdir`, which would move every thread). nil
    /// when that directory cannot be opened.
    static func withAddress<T>(home: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T? {
        let direct = path(home: home)
        if direct.utf8.count < pathCapacity { return withAddress(direct, body) }
        let directory = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return nil }
        defer { close(directory) }
        return withAddress("/proc/self/fd/\(directory)/\(fileName)", body)
    }

    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            for (i, byte) in path.utf8.enumerated() { sunPath[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.utf8.count + 1)
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}

/// The engine's end of the wake-up: a thread that turns pokes into calls of `onWake`, at
/// most one until the engine says it looked (`looked()`), however many datagrams come.
final class WakeListener: Sendable {
    private let fd: Int32
    /// The home, kept open: the socket file is removed through it, whatever its path's length.
    private let directory: Int32
    /// The socket file this listener bound (device, inode): only that one is removed.
    private let file: (device: UInt64, inode: UInt64)
    private let stopping = Atomic<Bool>(false)
    private let pending = Atomic<Bool>(false)
    private let onWake: @Sendable () -> Void

    /// Binds `<home>/engine.wake`. A socket file left by an engine that died is replaced, but
    /// only when no engine of another process can be running on the home (`EngineLock`) and
    /// nobody answers on it. Throws a reason for the log: then pokes go nowhere and the
    /// engine's periodic look at the store is what finds new work.
    init(home: String, onWake: @escaping @Sendable () -> Void) throws(EngineError) {
        let directory = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .io("cannot open \(home): \(String(cString: strerror(errno)))") }
        var st = stat()
        guard fstat(directory, &st) == 0, st.st_uid == geteuid(), st.st_mode & 0o077 == 0 else {
            close(directory)
            throw .io("\(home) is not a private directory (mode 0700, this user's)")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            close(directory)
            throw .io("cannot make the wake-up socket: \(String(cString: strerror(errno)))")
        }
        func bindOnce() -> Int32 {
            WakeSignal.withAddress(home: home) { address, length in bind(fd, address, length) == 0 ? 0 : errno } ?? errno
        }
        var failure = bindOnce()
        if failure == EADDRINUSE && EngineLock.noOtherEngine(home: home) && Self.nobodyListens(home: home) {
            unlinkat(directory, WakeSignal.fileName, 0)
            failure = bindOnce()
        }
        guard failure == 0 else {
            close(fd)
            close(directory)
            throw .io("cannot listen on \(WakeSignal.path(home: home)): \(String(cString: strerror(failure)))")
        }
        // The directory already keeps other users out; the socket's own mode says so too.
        fchmodat(directory, WakeSignal.fileName, 0o600, 0)
        var bound = stat()
        fstatat(directory, WakeSignal.fileName, &bound, AT_SYMLINK_NOFOLLOW)
        self.fd = fd
        self.directory = directory
        file = (UInt64(bound.st_dev), UInt64(bound.st_ino))
        self.onWake = onWake
        let thread = Thread { [self] in listen() }
        thread.name = "rchat-wake"
        thread.start()
    }

    /// A stale socket file: connecting to a name nobody has bound is refused.
    private static func nobodyListens(home: String) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        let refused = WakeSignal.withAddress(home: home) { address, length in
            connect(probe, address, length) != 0 && errno == ECONNREFUSED
        }
        return refused ?? false
    }

    private func listen() {
        // One byte is read: what a datagram says is never looked at (a longer one is cut,
        // an empty one counts the same).
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            if stopping.load(ordering: .acquiring) { break }
            if n < 0 {
                if errno == EINTR { continue }
                break
            }
            if !pending.exchange(true, ordering: .acquiringAndReleasing) { onWake() }
        }
        close(fd)
    }

    /// The engine is looking at the store now: the next poke calls `onWake` again.
    func looked() { pending.store(false, ordering: .releasing) }

    /// Ends the thread and removes the socket file, if it is still the one bound here.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        var st = stat()
        if fstatat(directory, WakeSignal.fileName, &st, AT_SYMLINK_NOFOLLOW) == 0,
           UInt64(st.st_dev) == file.device, UInt64(st.st_ino) == file.inode {
            unlinkat(directory, WakeSignal.fileName, 0)
        }
        close(directory)
    }
}
