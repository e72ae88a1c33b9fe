import Foundation
import RChatCore
import RChatCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Where an account's attachment files live, all under its home (0700 directories, 0600
/// files):
///
///     files/sent/NAME               the copy of a file as it was sent: what `save` and the
///                                   view open, and what its chunks are encrypted from
///     files/received/NAME           a received file, once whole and its hash checked
///     files/partial/C-ID.part       a file being received: the plaintext of the chunks
///                                   decrypted in order so far, each at its place
///     files/partial/C-ID.part.ahead chunks that came ahead of their turn, encrypted
///
/// NAME is the sanitised name, numbered on a clash; ID the message id in hex. The store
/// keeps these paths relative to the home.
struct AttachmentFiles {
    let home: String

    static let sent = "files/sent"
    static let received = "files/received"
    static let partial = "files/partial"

    func absolute(_ relative: String) -> String { "\(home)/\(relative)" }

    func directory(_ relative: String) throws(EngineError) -> String {
        try PrivateFiles.makeDirectory(absolute("files"))
        let path = absolute(relative)
        try PrivateFiles.makeDirectory(path)
        return path
    }

    /// What the disk holding the home has free for this user (`statvfs`: blocks available
    /// to a user who is not root); nil when it cannot be asked.
    func freeBytes() -> UInt64? {
        var st = statvfs()
        guard statvfs(home, &st) == 0 else { return nil }
        let (bytes, overflow) = UInt64(st.f_bavail).multipliedReportingOverflow(by: UInt64(st.f_frsize))
        return overflow ? .max : bytes
    }

    /// A free name for `name` in the folder (relative path), numbered on a clash.
    func freeName(_ name: String, in folder: String) -> String {
        let taken = { (candidate: String) in PrivateFiles.exists(self.absolute("\(folder)/\(candidate)")) }
        return "\(folder)/\(AttachmentName.unique(name, taken: taken))"
    }
}

/// A file opened for the attachment code, closed when released. Errors carry the path
/// and the system's reason.
final class OpenFile {
    let fd: Int32
    let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Opens a file the user named, to read. Not there, a directory, unreadable: usage
    /// errors in one line (bad input); other failures: I/O.
    static func readUserFile(_ path: String) throws(EngineError) -> (OpenFile, size: UInt64) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .usage("no file at \(path)") }
            throw .usage("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        if st.st_mode & S_IFMT == S_IFDIR { throw .usage("\(path) is a directory: name a file") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw .usage("\(path) is not a regular file") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .usage("cannot read \(path): \(String(cString: strerror(errno)))") }
        return (OpenFile(fd: fd, path: path), UInt64(st.st_size))
    }

    /// Creates a new 0600 file (never through a link); `truncate`: an existing one is emptied.
    static func create(_ path: String, replacing: Bool = false) throws(EngineError) -> OpenFile {
        let flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (replacing ? O_TRUNC : O_EXCL)
        let fd = open(path, flags, 0o600)
        guard fd >= 0 else { throw .io("cannot create \(path): \(String(cString: strerror(errno)))") }
        let file = OpenFile(fd: fd, path: path)
        guard fchmod(fd, 0o600) == 0 else { throw .io("cannot set permissions on \(path): \(String(cString: strerror(errno)))") }
        return file
    }

    /// An existing file of the account's own, to read and write.
    static func openOwn(_ path: String, writable: Bool) throws(EngineError) -> OpenFile {
        let fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open \(path): \(String(cString: strerror(errno)))") }
        return OpenFile(fd: fd, path: path)
    }

    /// Reads up to `count` bytes at `offset` (fewer only at the end of the file).
    func read(count: Int, at offset: Int64) throws(EngineError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        let failure: Int32? = out.withUnsafeMutableBytes { buf in
            while done < count {
                let n = pread(fd, buf.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 { if errno == EINTR { continue }; return errno }
                if n == 0 { break }
                done += n
            }
            return nil
        }
        if let failure { throw .io("cannot read \(path): \(String(cString: strerror(failure)))") }
        if done < count { out.removeLast(count - done) }
        return out
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(EngineError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .io("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            done += n
        }
    }

    func write(_ bytes: [UInt8], at offset: Int64) throws(EngineError) {
        var failure: EngineError?
        bytes.withUnsafeBytes { buf in
            do throws(EngineError) { try self.write(buf, at: offset) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    func sync() throws(EngineError) {
        if let failure = syncFailure() { throw .io(failure) }
    }

    /// `sync`'s failure in words (nil: on disk).
    func syncFailure() -> String? {
        fsync(fd) == 0 ? nil : "cannot sync \(path): \(String(cString: strerror(errno)))"
    }
}
