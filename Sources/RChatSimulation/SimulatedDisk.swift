import CSimDisk
import Foundation
import RChatStore

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

    /// Every account store made on a simulated disk from now on starts as one store made
    /// here, once per process, by the migrations (`rchat_simdisk_set_template`): the same
    /// bytes they would write (SQLite writes the same pages for the same statements), but
    /// written once instead of for every account, reinstall and new phone of every seed.
    /// The migrations themselves are tested by MigrationTests.
    public static func useStoreTemplate() { _ = storeTemplate }

    private static let storeTemplate: Void = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-simulation-template-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            fatalError("the simulation's store template: \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let disk = SimulatedDisk(prefix: directory + "/")
        let path = directory + "/" + Store.fileName
        do {
            let store = try Store(path: path)
            store.close()
        } catch {
            fatalError("the simulation's store template: \(error)")
        }
        var bytes: UnsafeMutablePointer<UInt8>?
        let size = rchat_simdisk_copy(disk.disk, path, &bytes)
        defer { free(bytes) }
        precondition(size > 0 && rchat_simdisk_set_template("/" + Store.fileName, bytes, size) >= 0, "the simulation's store template")
    }()

    public var writes: Int { Int(rchat_simdisk_writes(disk)) }
    public var syncs: Int { Int(rchat_simdisk_syncs(disk)) }
}
