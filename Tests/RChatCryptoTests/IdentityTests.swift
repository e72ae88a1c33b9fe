import XCTest
import RChatCore
@testable import RChatCrypto

final class IdentityTests: XCTestCase {
    func testDeviceCertificate() {
        let account = SigningKey.generate(), device = SigningKey.generate()
        let cert = DeviceCertificate.issue(deviceKey: device.publicKey, account: account)
        XCTAssertTrue(DeviceCertificate.verify(cert, deviceKey: device.publicKey, accountKey: account.publicKey))
        XCTAssertFalse(DeviceCertificate.verify(cert, deviceKey: SigningKey.generate().publicKey, accountKey: account.publicKey))
        XCTAssertFalse(DeviceCertificate.verify(cert, deviceKey: device.publicKey, accountKey: SigningKey.generate().publicKey))
        // A device key signing itself is not a certificate.
        let selfSigned = DeviceCertificate.issue(deviceKey: device.publicKey, account: device)
        XCTAssertFalse(DeviceCertificate.verify(selfSigned, deviceKey: device.publicKey, accountKey: account.publicKey))
    }

    func testSealedStateOpensOnlyOnTheSameMachineAndDevice() throws {
        let device = SigningKey.generate()
        let here = SealingKey(deviceKey: device, machineID: "0123456789abcdef")
        XCTAssertTrue(here.boundToMachine)
        let purpose = Array("conversation 1".utf8)
        let box = here.seal(Array("state".utf8), purpose: purpose)
        XCTAssertEqual(try here.open(box, purpose: purpose), Array("state".utf8))
        // Same device key, other machine.
        XCTAssertThrowsError(try SealingKey(deviceKey: device, machineID: "fedcba9876543210").open(box, purpose: purpose))
        // Same machine, other device key (a new device directory).
        XCTAssertThrowsError(try SealingKey(deviceKey: SigningKey.generate(), machineID: "0123456789abcdef").open(box, purpose: purpose))
        // Moved to another conversation's row.
        XCTAssertThrowsError(try here.open(box, purpose: Array("conversation 2".utf8)))
        XCTAssertFalse(SealingKey(deviceKey: device, machineID: nil).boundToMachine)
        XCTAssertFalse(SealingKey(deviceKey: device, machineID: "  \n").boundToMachine)
    }

    func testMachineIDReading() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-mid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("machine-id").path
        try "abc123\n".write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(SealingKey.readMachineID(path: file), "abc123")
        XCTAssertNil(SealingKey.readMachineID(path: dir.appendingPathComponent("missing").path))
    }

    func testPassphraseSeal() throws {
        let cheap = PassphraseSeal.Cost.interactive
        let sealed = try PassphraseSeal.seal(Array("account".utf8), passphrase: "correct horse", cost: cheap)
        XCTAssertEqual(try PassphraseSeal.open(sealed, passphrase: "correct horse"), Array("account".utf8))
        XCTAssertThrowsError(try PassphraseSeal.open(sealed, passphrase: "wrong horse")) {
            XCTAssertEqual($0 as? CryptoError, .decryptionFailed)
        }
        var altered = sealed
        altered[altered.count - 1] ^= 1
        XCTAssertThrowsError(try PassphraseSeal.open(altered, passphrase: "correct horse"))
        // The cost is authenticated: lowering it in the file breaks the seal.
        var cheaper = sealed
        cheaper[9 + 16 + 7] &-= 1
        XCTAssertThrowsError(try PassphraseSeal.open(cheaper, passphrase: "correct horse"))
        XCTAssertThrowsError(try PassphraseSeal.open(Array("not an export".utf8), passphrase: "x")) {
            XCTAssertEqual($0 as? CryptoError, .malformed("account export"))
        }
        // A hostile file asking for 1 TiB of memory is refused before any allocation.
        var greedy = sealed
        for i in 0..<8 { greedy[9 + 16 + 8 + i] = 0xff }
        XCTAssertThrowsError(try PassphraseSeal.open(greedy, passphrase: "correct horse"))
    }

    /// The sealed file with its costs replaced (offsets: magic 9, salt 16, then two u64).
    func withCost(_ sealed: [UInt8], ops: UInt64, mem: UInt64) -> [UInt8] {
        var out = sealed
        var w = ByteWriter()
        w.u64(ops)
        w.u64(mem)
        out.replaceSubrange(25..<41, with: w.bytes)
        return out
    }

    func testCostsOutsideInteractiveToSensitiveAreRefusedBeforeAnyDerivation() throws {
        let low = PassphraseSeal.Cost.interactive, high = PassphraseSeal.Cost.sensitive
        XCTAssertEqual([low.opsLimit, low.memLimit, high.opsLimit, high.memLimit], [2, 64 << 20, 4, 1 << 30])
        XCTAssertTrue(low.isAccepted && high.isAccepted && PassphraseSeal.Cost.moderate.isAccepted)
        let sealed = try PassphraseSeal.seal(Array("account".utf8), passphrase: "pw", cost: low)
        let hostile: [(UInt64, UInt64)] = [
            (2, 4 << 30), (2, high.memLimit + 1), (2, low.memLimit - 1), (2, 8192), (2, .max),
            (1, low.memLimit), (5, low.memLimit), (1 << 32, low.memLimit), (.max, .max), (0, 0),
        ]
        for (ops, mem) in hostile {
            // Refused from the header alone. Had Argon2 run, 4 GiB would have failed to
            // allocate (.outOfMemory) or opened nothing (.decryptionFailed: the costs are
            // authenticated), and an opslimit of 2^64-1 would never have returned.
            XCTAssertThrowsError(try PassphraseSeal.open(withCost(sealed, ops: ops, mem: mem), passphrase: "pw")) {
                XCTAssertEqual($0 as? CryptoError, .unacceptableCost(opsLimit: ops, memLimit: mem))
            }
            XCTAssertThrowsError(try PassphraseSeal.Header(parsing: withCost(sealed, ops: ops, mem: mem)))
        }
        // At the edges of the range the cost is accepted (and, being authenticated, a
        // changed one then fails to open rather than being refused).
        XCTAssertEqual(try PassphraseSeal.Header(parsing: sealed).cost, low)
        XCTAssertThrowsError(try PassphraseSeal.open(withCost(sealed, ops: 3, mem: low.memLimit), passphrase: "pw")) {
            XCTAssertEqual($0 as? CryptoError, .decryptionFailed)
        }
    }
}
