import CSimDisk

/// One simulated machine's disk (Sources/CSimDisk): every SQLite file whose path begins with
/// `prefix` lives in memory, keeping what was synced apart from what was written since. A
/// power cut drops or tears what was not synced and kills every connection open on it.
/// (Only SQLite's files: the folders, and any file written without SQLite, stay on the real
/// file system.)
public final class SimulatedDisk {
    public let prefix: String
    private let disk: OpaquePointer

    public init(prefix: String) {
        precondition(rchat_simdisk_install() == 0, "the simulated disk's VFS could not be registered")
        self.prefix = prefix
        disk = rchat_simdisk_create(prefix)
    }

    deinit { rchat_simdisk_destroy(disk) }

    /// The power goes: returns the number of sectors that had not been synced.
    @discardableResult
    public func powerCut(seed: UInt64) -> Int { Int(rchat_simdisk_power_cut(disk, seed)) }

    /// Makes what was written to `path` durable (as `fdatasync`); false if there is no such file.
    @discardableResult
    public func sync(_ path: String) -> Bool { rchat_simdisk_sync(disk, path) == 0 }

    public var writes: Int { Int(rchat_simdisk_writes(disk)) }
    public var syncs: Int { Int(rchat_simdisk_syncs(disk)) }
}
