import Foundation
import RChatCore
import RChatCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Files that hold secrets: 0600 in 0700 directories of the user's own, written whole or
/// not at all, never opened through a link.
public enum PrivateFiles {
    /// Creates `path` (and missing parents) as 0700; an existing one is checked as
    /// `checkDirectory` does (tightened to 0700 when it is ours, refused when it is not).
    static func makeDirectory(_ path: String) throws(EngineError) {
        if !exists(path) {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw .io("cannot create \(path): \(error.localizedDescription)")
            }
        }
        try checkDirectory(path)
    }

    /// A home or device directory before anything in it is read or written
    /// (`PrivateDirectory`): nothing there, nothing to do; the user's own but open to
    /// others, tightened to 0700; another user's, or not a directory, refused in one line.
    static func checkDirectory(_ path: String) throws(EngineError) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            if errno == ENOENT { return }
            throw .io("cannot use \(path): \(String(cString: strerror(errno)))")
        }
        switch PrivateDirectory.judge(mode: UInt32(st.st_mode), owner: st.st_uid, user: geteuid()) {
        case .isPrivate:
            return
        case .tighten:
            guard chmod(path, 0o700) == 0 else { throw .io("cannot set permissions on \(path): \(String(cString: strerror(errno)))") }
        case .ownedByAnother(let owner):
            throw .io("\(path) belongs to another user (uid \(owner)), not to you (uid \(geteuid())): rChat keeps an account only in a directory of your own; choose another")
        case .notADirectory:
            throw .io("\(path) exists and is not a directory")
        }
    }

    /// Opens a file in a home or device directory, never through a link (a symlink at
    /// `path` fails with ELOOP); a new file is 0600. Returns the descriptor, or -1 (errno set).
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) -> Int32 {
        Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
    }

    /// A new, empty file at `path` for this run alone (a log): whatever was there, a planted
    /// symlink included, is removed, never followed. Returns the descriptor, or -1.
    public static func createAfresh(_ path: String, _ flags: Int32) -> Int32 {
        unlink(path)
        return open(path, flags | O_CREAT | O_EXCL)
    }

    /// Writes a new file with mode 0600, whole or not at all, never through a link:
    ///
    /// 1. the bytes go to a temporary file in `path`'s directory, created with
    ///    `O_CREAT | O_EXCL | O_NOFOLLOW` under a random name — a name that exists (a
    ///    planted symlink included) is never opened, another one is drawn;
    /// 2. it is fsynced and hard-linked to `path`, which fails if anything at all is there,
    ///    a dangling symlink included (where the file system has no hard links: only if
    ///    `lstat` finds nothing there, then a rename);
    /// 3. the temporary name is removed and the directory fsynced (if that fails, the new
    ///    name is removed and the write fails).
    ///
    /// `temporaryName` draws the temporary file's name in the directory (tests plant
    /// things at the names it gives).
    static func write(_ bytes: [UInt8], to path: String,
                      temporaryName: () -> String = { ".rchat-\(Hex.encode(Random.bytes(8))).tmp" }) throws(EngineError) {
        if exists(path) { throw .io("\(path) already exists; choose a new file name") }
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        var temp = ""
        var fd: Int32 = -1
        for _ in 0..<16 {
            temp = "\(directory)/\(temporaryName())"
            fd = open(temp, O_WRONLY | O_CREAT | O_EXCL)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw .io("cannot write \(path): \(String(cString: strerror(errno)))") }
        var ok = fchmod(fd, 0o600) == 0
        bytes.withUnsafeBytes { buf in
            var off = 0
            while ok && off < buf.count {
                let n = Glibc.write(fd, buf.baseAddress! + off, buf.count - off)
                if n < 0 { if errno == EINTR { continue }; ok = false } else { off += n }
            }
        }
        ok = ok && fsync(fd) == 0
        var failure = ok ? 0 : errno
        close(fd)
        var renamed = false
        if ok && link(temp, path) != 0 {
            failure = errno
            if [EPERM, EOPNOTSUPP, EMLINK].contains(failure) && !exists(path) && rename(temp, path) == 0 {
                failure = 0
                renamed = true
            }
        }
        if !renamed { unlink(temp) }
        switch failure {
        case 0: break
        case EEXIST: throw .io("\(path) already exists; choose a new file name")
        default: throw .io("cannot write \(path): \(String(cString: strerror(failure)))")
        }
        // Make the new name itself durable: a name the disk did not confirm is taken back
        // and the write fails (said in one line; the same name can be tried again).
        if let reason = FolderSync.sync(directory) {
            unlink(path)
            throw .io("cannot write \(path): the disk did not confirm it (\(reason))")
        }
    }

    /// Whether anything is at `path`, without following a symlink there.
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func read(_ path: String) throws(EngineError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw .io("cannot read \(path)") }
        return [UInt8](data)
    }

    /// The permission bits of a file, or nil if it does not exist.
    static func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : nil
    }
}
