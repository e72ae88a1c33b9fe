import Foundation
import RChatCore
import RChatCrypto

/// This machine's device key — its "secure hardware" (docs/ARCHITECTURE.md, "Secrets at rest"). Generated once per device
/// directory, stored there as a 0600 file in a 0700 directory, never exported. Deleting the
/// account's data keeps it; a new, empty device directory is a new phone.
public struct DeviceKeystore {
    static let magic = Array("RCHATDEV1".utf8)

    public let directory: String
    public init(directory: String) { self.directory = directory }

    var keyPath: String { "\(directory)/device.key" }

    public var exists: Bool { FileManager.default.fileExists(atPath: keyPath) }

    /// The device key, created on first use.
    public func loadOrCreate() throws(EngineError) -> SigningKey {
        if exists { return try load() }
        try PrivateFiles.makeDirectory(directory)
        let key = SigningKey.generate()
        var bytes = Self.magic + key.seed.exposedCopy()
        defer { wipe(&bytes) }
        try PrivateFiles.write(bytes, to: keyPath)
        return key
    }

    public func load() throws(EngineError) -> SigningKey {
        var st = stat()
        if lstat(keyPath, &st) == 0, st.st_mode & S_IFMT == S_IFLNK {
            throw .deviceKey("device key \(keyPath) is a symbolic link: rChat reads it only as a file of the device directory's own, never through a link")
        }
        guard let mode = PrivateFiles.mode(keyPath) else { throw .deviceKey("no device key in \(directory)") }
        // Like ssh: a key others can read is not this machine's secret any more.
        guard mode & 0o077 == 0 else {
            throw .deviceKey("device key \(keyPath) is accessible by other users (mode \(String(mode, radix: 8))); run: chmod 600 \(keyPath)")
        }
        let damaged = EngineError.deviceKey("device key file \(keyPath) is damaged; it was left unchanged: restore a copy of it, "
                                            + "or restore your account export into a new home and device directory with `rchat init --import FILE`")
        var bytes = try PrivateFiles.read(keyPath)
        defer { wipe(&bytes) }
        guard bytes.count == Self.magic.count + SigningKey.seedBytes, Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            throw damaged
        }
        var seed = Array(bytes.suffix(SigningKey.seedBytes))
        do {
            return try SigningKey(seed: SecretBytes(consuming: &seed))
        } catch {
            throw damaged
        }
    }

    /// The key that seals this device's saved conversation state, bound to this machine.
    public func sealingKey(for deviceKey: SigningKey, machineIDPath: String = "/etc/machine-id") -> SealingKey {
        SealingKey(deviceKey: deviceKey, machineID: SealingKey.readMachineID(path: machineIDPath))
    }
}
