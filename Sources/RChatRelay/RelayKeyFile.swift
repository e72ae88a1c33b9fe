import Foundation
import Glibc
import RChatCore
import RChatCrypto

/// The relay's static X25519 key, kept in a 0600 file: created on first run, loaded after,
/// so the same file gives the same relay address.
public enum RelayKeyFile {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    static let magic = Array("rchat-relay-key-v1\n".utf8)

    public static func loadOrCreate(path: String) throws(Failure) -> AgreementKey {
        if FileManager.default.fileExists(atPath: path) {
            guard var data = FileManager.default.contents(atPath: path).map(Array.init) else {
                throw Failure(description: "cannot read key file \(path)")
            }
            defer { wipe(&data) }
            guard data.count == magic.count + AgreementKey.keyBytes, Array(data[..<magic.count]) == magic else {
                throw Failure(description: "key file \(path) is not an rchat-relay key (refusing to overwrite it)")
            }
            var secret = Array(data[magic.count...])
            return AgreementKey(secretKey: SecretBytes(consuming: &secret))
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
                throw Failure(description: "cannot create directory \(directory): \(error.localizedDescription)")
            }
        }
        let key = AgreementKey.generate()
        var contents = magic + key.secretKey.exposedCopy()
        defer { wipe(&contents) }
        // O_EXCL: two relays starting at once must not each write a different key.
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create key file \(path): \(String(cString: strerror(errno)))") }
        let written = contents.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
        let synced = fsync(fd) == 0
        Glibc.close(fd)
        guard written == contents.count, synced else {
            unlink(path)
            throw Failure(description: "cannot write key file \(path)")
        }
        // The new name too: a key lost at a power cut would be a new relay address.
        if FolderSync.sync(directory) != nil {
            unlink(path)
            throw Failure(description: "cannot write key file \(path): the disk did not confirm its name")
        }
        return key
    }
}
