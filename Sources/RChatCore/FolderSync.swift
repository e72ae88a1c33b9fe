#if canImport(Glibc)
import Glibc
#endif

/// A new or changed name in a folder is durable only once the folder itself is fsynced:
/// the one place that does it (a received file, a private file, the relay's key).
public enum FolderSync {
    /// Fsyncs the folder at `path`: nil when the disk confirmed it, else why not (strerror).
    public static func sync(_ path: String) -> String? {
        let folder = open(path.isEmpty ? "." : path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let synced = folder >= 0 && fsync(folder) == 0
        let reason = String(cString: strerror(errno))
        if folder >= 0 { close(folder) }
        return synced ? nil : reason
    }
}
