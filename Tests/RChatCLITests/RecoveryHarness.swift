import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// Helpers for the recovery tests, on top of EngineHarness.swift: system rows of
// `rchat list NAME --json`, reinstalling or moving an account to a new device directory,
// and waits that re-check a condition until a deadline. No fixed waits.

/// One system row of `rchat list NAME --json`.
struct ListedRow: Equatable {
    let text: String
    let action: String?
    let ids: [String]
}

/// The passphrase of every backup these tests make.
let recoveryPassphrase = "correct horse battery staple"

extension EngineWorld {
    /// The system rows of `rchat list NAME --json`, in conversation order.
    func rows(_ person: String, _ name: String) throws -> [ListedRow] {
        let run = try box.rchat(person, ["list", name, "--json"])
        try expectSuccess(run)
        var rows: [ListedRow] = []
        for line in run.lines {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
            guard object["type"] as? String == "row" else { continue }
            XCTAssertTrue(object.keys.contains("action"), "a row always says its action, null or not: \(line)")
            rows.append(ListedRow(text: try XCTUnwrap(object["text"] as? String, line),
                                  action: object["action"] as? String,
                                  ids: try XCTUnwrap(object["ids"] as? [String], line)))
        }
        return rows
    }

    /// Waits until `person`'s conversation with `name` shows a row with exactly `text`; returns it.
    @discardableResult
    func rowBeforeDeadline(_ person: String, _ name: String, _ text: String, timeout: Double = 20) throws -> ListedRow {
        var found: ListedRow?
        try eventually("\(person)'s conversation with \(name) shows the row “\(text)”", timeout: timeout) {
            found = try self.rows(person, name).first { $0.text == text }
            return found != nil
        }
        return found!
    }

    /// Waits until `person` lists the messages `ids` with `status` (every one of them).
    func statusesBeforeDeadline(_ person: String, _ name: String, _ ids: [String], _ status: String, timeout: Double = 20) throws {
        try eventually("\(person)'s messages \(ids) to \(name) are \(status)", timeout: timeout) {
            let listed = try self.list(person, name)
            return ids.allSatisfy { id in listed.first { $0.id == id }?.status == status }
        }
    }

    /// Waits until `person` has received the messages `ids` from `name`.
    func receivedBeforeDeadline(_ person: String, _ name: String, _ ids: [String], timeout: Double = 20) throws {
        try eventually("\(person) received \(ids) from \(name)", timeout: timeout) {
            let got = Set(try self.list(person, name).filter { $0.direction == "in" }.map(\.id))
            return ids.allSatisfy(got.contains)
        }
    }

    /// `rchat account export`: the backup's path.
    func exportAccount(_ person: String, as file: String? = nil) throws -> String {
        let backup = box.path(file ?? "\(person)-backup-\(UUID().uuidString.prefix(8)).rchat")
        try expectSuccess(box.rchat(person, ["account", "export", backup], env: ["RCHAT_PASSPHRASE": recoveryPassphrase]))
        return backup
    }

    /// `rchat init --import BACKUP` into `person`'s home (and device directory), with receipts at once.
    func importAccount(_ person: String, from backup: String, env: [String: String] = [:]) throws {
        var environment = env
        environment["RCHAT_PASSPHRASE"] = recoveryPassphrase
        try expectSuccess(box.rchat(person, ["init", "--import", backup], env: environment))
        try expectSuccess(box.rchat(person, ["settings", "receipt-window-ms", "0"], env: env))
        if let steadyTraffic { try expectSuccess(box.rchat(person, ["settings", "steady-traffic", steadyTraffic], env: env)) }
    }

    /// A "reinstall" (same device directory) or "new phone" (a new, empty one):
    /// export (or take an `older` export), delete the data directory, `init --import`.
    /// The person's sync must be stopped.
    func reinstall(_ person: String, newPhone: Bool = false, from older: String? = nil, env: [String: String] = [:]) throws {
        precondition(!isSyncRunning(person), "stop \(person)'s sync before reinstalling")
        let backup = try older ?? exportAccount(person)
        try FileManager.default.removeItem(atPath: box.path("\(person)-home"))
        if newPhone { try FileManager.default.removeItem(atPath: box.path("\(person)-device")) }
        try importAccount(person, from: backup, env: env)
    }

    /// Sends `text` and waits until it is Delivered: everything `person` sent to `name`
    /// before it, on the same conversation, has been handled by then (a barrier).
    @discardableResult
    func deliveredBarrier(_ person: String, to name: String, _ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let id = try send(person, to: name, text, file: file, line: line)
        try waitForStatus(person, name, id, "Delivered", timeout: 20)
        return id
    }
}

/// The base of the recovery tests: like `EngineTestCase`, with a check that fits resends —
/// a resent message goes back to Sending on purpose, but a Delivered or Read never goes back.
class RecoveryTestCase: EngineTestCase {
    override func checkStatusHistory(_ world: EngineWorld) {
        assertDeliveredNeverGoesBack(world)
    }

    func assertDeliveredNeverGoesBack(_ world: EngineWorld, file: StaticString = #filePath, line: UInt = #line) {
        for (person, byID) in world.timelines {
            for (id, seen) in byID {
                guard let first = seen.firstIndex(where: { $0 == "Delivered" || $0 == "Read" }) else { continue }
                let after = seen[first...].map { statusRank[$0] ?? -1 }
                XCTAssertEqual(after, after.sorted(), "\(person)'s message \(id) went \(seen.joined(separator: " → "))", file: file, line: line)
                XCTAssertFalse(after.contains { $0 < statusRank["Delivered"]! }, "\(person)'s message \(id) went \(seen.joined(separator: " → "))",
                               file: file, line: line)
            }
        }
    }

    /// Two accounts that added each other, both syncing, with a first message Delivered:
    /// a conversation that has had a session.
    @discardableResult
    func chattingPair() throws -> String {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        return try world.deliveredBarrier("alice", to: "Sam", "warm-up")
    }

    /// Sam goes away; Alice writes `count` messages that the relay holds for him (Sent).
    func messagesHeldForSam(_ count: Int, _ label: String = "while you were away") throws -> [String] {
        world.stopSync("sam")
        var ids: [String] = []
        for n in 1...count { ids.append(try world.send("alice", to: "Sam", "\(label) \(n)")) }
        for id in ids { try world.waitForStatus("alice", "Sam", id, "Sent") }
        return ids
    }
}
