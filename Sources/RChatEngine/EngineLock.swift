import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One engine per home: `rchat sync`, the TUI and `rchat check` take this lock, so two of
/// them never drive the same sessions at once. The kernel drops it when the process dies,
/// so a crash never leaves a stale lock.
public final class EngineLock {
    private let fd: Int32

    /// nil when another process holds it.
    public init?(home: String) throws(EngineError) {
        let path = "\(home)/engine.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
