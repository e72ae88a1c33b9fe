import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatStore
@testable import RChatEngine

/// The account's keys in `rchat.db` are sealed with the device-bound key, like the session
/// state: a copy of the database (a backup that ignores CACHEDIR.TAG) without the device
/// directory yields no account key, previous key or mailbox seed (nor the previous one); opened with another
/// device directory it is refused in one line and left as it was; `rchat account export`
/// remains the way to move an account. A row written in the clear by an earlier version is
/// sealed the first time its own device opens it, and refused by any other.
final class AccountSecretsAtRestTests: RelayEngineTestCase {
    let offline = try! RelayAddress(parsing: "127.0.0.1:9/" + String(repeating: "A", count: 43))

    func testACopiedDatabaseHoldsNoAccountSecretAndOpensOnlyWithItsDevice() throws {
        let alice = try account("Alice", relay: offline)
        let first = try alice.identity()
        try alice.rotateKeys()  // so the row keeps a previous account key and mailbox too
        let me = try alice.identity()
        let secrets = [("the account key", me.accountKey.seed.exposedCopy()),
                       ("the previous account key", first.accountKey.seed.exposedCopy()),
                       ("the mailbox seed", me.mailboxSeed.exposedCopy()),
                       ("the previous mailbox seed", first.mailboxSeed.exposedCopy())]
        XCTAssertNotEqual(secrets[0].1, secrets[1].1)
        XCTAssertNotEqual(secrets[2].1, secrets[3].1, "the rotation moved the mailbox")
        // The files as they are while the account is open (the WAL holds the latest writes).
        assertHoldsNone(of: secrets, in: alice.locations.home)

        // A backup that copies the home: rchat.db and whatever WAL it has.
        alice.store.close()
        let copy = directory.appendingPathComponent("copied-home").path
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for file in try FileManager.default.contentsOfDirectory(atPath: alice.locations.home) where file.hasPrefix(Store.fileName) {
            try FileManager.default.copyItem(atPath: "\(alice.locations.home)/\(file)", toPath: "\(copy)/\(file)")
        }
        assertHoldsNone(of: secrets, in: copy)

        // Opened with another device directory: refused, and nothing written.
        let before = snapshot(copy)
        let thief = Locations(home: copy, deviceDirectory: directory.appendingPathComponent("thief-device").path)
        XCTAssertThrowsError(try AccountService(locations: thief)) {
            XCTAssertTrue("\($0)".contains("belongs to another device or machine"), "\($0)")
        }
        let rchat = try XCTUnwrap(Self.binary("rchat"), "build rchat first")
        for command in [["code"], ["contacts"], ["account", "export", directory.appendingPathComponent("stolen.rchat").path]] {
            let run = try runProcess(rchat, command + ["--home", copy, "--device-dir", thief.deviceDirectory], env: ["RCHAT_PASSPHRASE": "x"])
            XCTAssertEqual(run.status, 1, "\(command): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "one line: \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("another device"), run.stderr)
        }
        XCTAssertEqual(snapshot(copy), before, "nothing written to the copy")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("stolen.rchat").path))

        // The original, with its device, still exports its keys.
        let original = try AccountService(locations: alice.locations)
        let backup = directory.appendingPathComponent("alice.rchat").path
        try original.export(to: backup, passphrase: "pass phrase")
        var plain = try PassphraseSeal.open(try PrivateFiles.read(backup), passphrase: "pass phrase")
        let exported = try AccountBackup(decoding: plain)
        wipe(&plain)
        XCTAssertEqual(exported.accountSeed, secrets[0].1)
        XCTAssertEqual(exported.mailboxSeed, secrets[2].1)
        original.store.close()
    }

    func testSecretsKeptInTheClearByAnEarlierVersionAreSealedWhenItsDeviceOpensThem() throws {
        let alice = try account("Alice", relay: offline)
        let first = try alice.identity()
        try alice.rotateKeys()
        let me = try alice.identity()
        let secrets = [("the account key", me.accountKey.seed.exposedCopy()),
                       ("the previous account key", first.accountKey.seed.exposedCopy()),
                       ("the mailbox seed", me.mailboxSeed.exposedCopy()),
                       ("the previous mailbox seed", first.mailboxSeed.exposedCopy())]
        // The row as schema version 1 kept it (what migration 2 marks `secrets_sealed = 0`).
        var row = try XCTUnwrap(alice.store.account())
        row.secretKey = secrets[0].1
        row.previousSecretKey = secrets[1].1
        row.mailboxSeed = secrets[2].1
        row.previousMailboxSeed = secrets[3].1
        row.secretsAtRest = .clear
        try alice.store.putAccount(row)
        alice.store.close()
        for (name, secret) in secrets {
            XCTAssertTrue(files(in: alice.locations.home).contains { $0.1.range(of: Data(secret)) != nil }, "the clear row holds \(name)")
        }

        // Another device directory: refused before anything is written, the row untouched.
        let before = snapshot(alice.locations.home)
        let other = Locations(home: alice.locations.home, deviceDirectory: directory.appendingPathComponent("other-device").path)
        XCTAssertThrowsError(try AccountService(locations: other))
        XCTAssertEqual(snapshot(alice.locations.home), before)

        // Its own device: sealed on opening, and gone from the files for good.
        let reopened = try AccountService(locations: alice.locations)
        XCTAssertEqual(try reopened.store.account()?.secretsAtRest, .sealedToDevice)
        assertHoldsNone(of: secrets, in: alice.locations.home)
        let again = try reopened.identity()
        XCTAssertEqual(again.accountKey.seed.exposedCopy(), secrets[0].1)
        XCTAssertEqual(again.previous?.key.seed.exposedCopy(), secrets[1].1)
        XCTAssertEqual(again.mailboxSeed.exposedCopy(), secrets[2].1)
        XCTAssertEqual(again.movedFrom?.key.seed.exposedCopy(), secrets[3].1)
        XCTAssertEqual(try reopened.store.database.userVersion, Store.schemaVersion, "the rewrite keeps the schema version")
        reopened.store.close()
        assertHoldsNone(of: secrets, in: alice.locations.home)
        XCTAssertEqual(try AccountService(locations: alice.locations).identity().accountKey.publicKey, me.accountKey.publicKey)
    }

    // MARK: helpers

    /// The database files of a home (rchat.db and its WAL and shared-memory files) with their bytes.
    func files(in home: String) -> [(String, Data)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: home)) ?? []
        return names.filter { $0.hasPrefix(Store.fileName) }.sorted().compactMap { name in
            FileManager.default.contents(atPath: "\(home)/\(name)").map { (name, $0) }
        }
    }

    func snapshot(_ home: String) -> [String: Data] {
        Dictionary(uniqueKeysWithValues: files(in: home))
    }

    func assertHoldsNone(of secrets: [(String, [UInt8])], in home: String, file: StaticString = #filePath, line: UInt = #line) {
        let found = files(in: home)
        XCTAssertTrue(found.contains { $0.0 == Store.fileName }, "no database in \(home)", file: file, line: line)
        for (name, secret) in secrets {
            for (fileName, bytes) in found {
                XCTAssertNil(bytes.range(of: Data(secret)), "\(fileName) holds \(name)", file: file, line: line)
            }
        }
    }

    func runProcess(_ executable: String, _ args: [String], env: [String: String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        process.environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
