import Glibc

/// The few file operations media needs, with errors that keep the errno. Files this code
/// creates are new 0600 files (the caller puts them in the account's 0700 directories).
enum FileBytes {
    /// Up to `count` bytes from the start of the file (fewer when it is shorter).
    static func prefix(of path: String, count: Int) throws(MediaError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError(.file(action: "open", path: path, errno: errno)) }
        defer { close(fd) }
        return try read(fd, count: count, path: path)
    }

    /// Up to `count` bytes from the descriptor's position; fewer only at the end of the file.
    static func read(_ fd: Int32, count: Int, path: String) throws(MediaError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes[filled...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(.file(action: "read", path: path, errno: errno))
            }
            if n == 0 { break }
            filled += n
        }
        return Array(bytes[..<filled])
    }

    /// A new 0600 file at `path`, replacing what was there (a symlink there is refused).
    static func create(_ path: String) throws(MediaError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw MediaError(.file(action: "create", path: path, errno: errno)) }
        // O_TRUNC keeps an existing file's mode.
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw MediaError(.file(action: "create", path: path, errno: code))
        }
        return fd
    }

    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(MediaError) {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(.file(action: "write", path: path, errno: errno))
            }
            offset += n
        }
    }

    /// An array's bytes as they lie in memory (callers put multi-byte values in file order first).
    static func write<T: BitwiseCopyable>(_ fd: Int32, _ values: [T], path: String) throws(MediaError) {
        let failure: MediaError? = values.withUnsafeBytes { raw in
            do throws(MediaError) { try write(fd, raw, path: path); return nil } catch { return error }
        }
        if let failure { throw failure }
    }
}
