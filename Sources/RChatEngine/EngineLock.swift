import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One engine per home: `rchat sync`, the TUI and `rchat check` take this lock, so two of
/// them never drive the same sessions at once. The kernel drops it when the process dies,
/// so a crash never leaves a stale lock.
public final class EngineLock {
    private let fd: Int32
    private let key: String

    /// The homes whose lock this process holds (by real path): a second `flock` in the same
    /// process would fail like another process's, so this says "it is ours".
    private static let heldHere = Mutex<Set<String>>([])

    /// nil when another process holds it.
    public init?(home: String) throws(EngineError) {
        let path = Self.path(home)
        let fd = PrivateFiles.open(path, O_RDWR | O_CREAT)
        guard fd >= 0 else { throw .io("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        key = Self.key(home)
        Self.heldHere.withLock { _ = $0.insert(key) }
    }

    deinit {
        Self.heldHere.withLock { _ = $0.remove(key) }
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// True when no engine of another process can be running on `home`: this process holds
    /// its lock, or nobody does (checked by taking it for a moment).
    static func noOtherEngine(home: String) -> Bool {
        if heldHere.withLock({ $0.contains(key(home)) }) { return true }
        let fd = PrivateFiles.open(path(home), O_RDWR | O_CREAT)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(fd, LOCK_UN)
        return true
    }

    private static func path(_ home: String) -> String { "\(home)/engine.lock" }

    private static func key(_ home: String) -> String {
        URL(fileURLWithPath: home).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
