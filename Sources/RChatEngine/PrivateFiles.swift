import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files that hold secrets: 0600 in 0700 directories, written whole or not at all.
enum PrivateFiles {
    /// Creates `path` (and missing parents) as 0700; tightens an existing one to 0700.
    static func makeDirectory(_ path: String) throws(EngineError) {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else { throw .io("\(path) exists and is not a directory") }
        } else {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw .io("cannot create \(path): \(error.localizedDescription)")
            }
        }
        guard chmod(path, 0o700) == 0 else { throw .io("cannot set permissions on \(path): \(String(cString: strerror(errno)))") }
    }

    /// Writes a new file with mode 0600 atomically (temp file, fsync, rename). Refuses to
    /// replace an existing file unless `replace` is set.
    static func write(_ bytes: [UInt8], to path: String, replace: Bool = false) throws(EngineError) {
        if !replace && FileManager.default.fileExists(atPath: path) { throw .io("\(path) already exists") }
        let temp = "\(path).tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
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
        close(fd)
        guard ok, rename(temp, path) == 0 else {
            unlink(temp)
            throw .io("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        // Make the rename itself durable.
        let dirFD = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
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
