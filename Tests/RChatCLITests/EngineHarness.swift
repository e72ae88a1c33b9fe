import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// Helpers for the engine's integration tests: a real `rchat-relay` process, real
// `rchat sync` processes started and stopped by their PIDs, and polling of
// `rchat list NAME --json` against a deadline. Nothing here waits a fixed time hoping for an
// event: every wait re-checks a condition until it holds or its deadline passes.

/// Blocks the calling thread until `deadline`; the one primitive every wait here is built on.
func waitUntilDeadline(_ deadline: Date) {
    let remaining = deadline.timeIntervalSinceNow
    guard remaining > 0 else { return }
    _ = DispatchSemaphore(value: 0).wait(timeout: .now() + remaining)
}

/// A condition that did not hold in time: thrown, so the test stops at the first one.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    let seconds: Double
    let context: String
    var description: String { "timed out after \(seconds) s waiting for: \(what)\n\(context)" }
}

/// One message line of `rchat list NAME --json`.
struct Listed: Equatable {
    let id: String
    let direction: String
    let text: String
    let status: String?
    let resent: Bool
    /// What rChat holds it back for, in words (`waiting`); nil: nothing.
    var waiting: String? = nil
}

/// One line of `rchat contacts --json`.
struct ListedContact: Equatable {
    let name: String
    let state: String
    let unread: Int
}

/// Status ranks along the usual path, for "Sent or higher" waits.
let statusRank: [String: Int] = ["Sending": 0, "Not confirmed": 1, "Sent": 2, "Delivered": 3, "Read": 4]

/// Where an outgoing message that is never resent may go from each status (docs/ARCHITECTURE.md, "Rules that keep statuses true"),
/// in one step or several: nothing ever lowers Sent, and nothing lowers Delivered or Read.
let laterStatuses: [String: Set<String>] = [
    "Sending": ["Not confirmed", "Sent", "Delivered", "Read", "Not delivered", "Failed to send"],
    "Not confirmed": ["Sent", "Delivered", "Read", "Not delivered"],
    "Sent": ["Delivered", "Read", "Not delivered"],
    "Failed to send": ["Delivered", "Read"],
    "Not delivered": ["Delivered", "Read"],
    "Delivered": ["Read"],
    "Read": [],
]

/// A test's little world: a sandbox of homes, one relay process, and the `rchat sync`
/// processes it started. `shutDown()` ends every process it started, by PID, and only those.
final class EngineWorld {
    let box: Sandbox
    let keyFile: String
    private(set) var relay: Process?
    private(set) var relayAddress = ""
    private(set) var relayPort = 0
    private var otherRelays: [Process] = []
    private var relayRuns = 0
    private(set) var syncs: [String: Process] = [:]
    private var syncRuns: [String: Int] = [:]
    /// Every status each outgoing message was seen with, in the order seen: person → id → statuses.
    private(set) var timelines: [String: [String: [String]]] = [:]

    /// Records a status seen of `person`'s message (or of one delivery of it: `key` "ID to
    /// MEMBER"), for `assertStatusesNeverLowered`.
    func record(_ person: String, _ key: String, _ status: String) {
        if timelines[person]?[key]?.last != status { timelines[person, default: [:]][key, default: []].append(status) }
    }

    init() throws {
        box = try Sandbox()
        keyFile = box.path("relay.key")
    }

    static func display(_ person: String) -> String { person.prefix(1).uppercased() + person.dropFirst() }

    // MARK: the relay

    /// Starts `rchat-relay` (port 0 the first time; the same port again on a restart) and
    /// reads its `relay ADDRESS` line.
    @discardableResult
    func startRelay(samePort: Bool = false, arguments: [String] = [], environment: [String: String] = [:],
                    file: StaticString = #filePath, line: UInt = #line) throws -> String {
        precondition(relay == nil, "a relay is already running")
        let (p, address) = try launchRelay(port: samePort ? relayPort : 0, keyFile: keyFile, arguments: arguments, environment: environment)
        relay = p
        if samePort {
            XCTAssertEqual(address, relayAddress, "the same --key-file and port give the same address", file: file, line: line)
        }
        relayAddress = address
        let hostPort = address.split(separator: "/")[0]
        relayPort = Int(hostPort.split(separator: ":").last!)!
        return address
    }

    /// A second relay (its own key), for accounts on different relays; ended by `shutDown()`.
    func startSecondRelay() throws -> String {
        let (p, address) = try launchRelay(port: 0, keyFile: box.path("relay-second.key"), arguments: [], environment: [:])
        otherRelays.append(p)
        return address
    }

    private func launchRelay(port: Int, keyFile: String, arguments: [String], environment: [String: String]) throws -> (Process, String) {
        relayRuns += 1
        let out = box.path("relay-\(relayRuns).out"), err = box.path("relay-\(relayRuns).err")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Binaries.path("rchat-relay"))
        p.arguments = ["--listen", "127.0.0.1:\(port)", "--key-file", keyFile] + arguments
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        p.standardInput = FileHandle.nullDevice
        try p.run()
        var printed = ""
        do {
            try eventually("the relay prints its address", timeout: 10) {
                printed = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
                return printed.hasSuffix("\n") || !p.isRunning
            }
        } catch {
            end(p, signal: SIGKILL)
            throw error
        }
        let lines = printed.split(separator: "\n")
        guard lines.count == 1, lines[0].hasPrefix("relay ") else {
            end(p, signal: SIGKILL)
            throw TimedOut(what: "one `relay ADDRESS` line", seconds: 0, context: "stdout: \(printed)\nstderr: \(text(err))")
        }
        return (p, String(lines[0].dropFirst("relay ".count)))
    }

    /// Stops the relay this world started, by its PID.
    func stopRelay(signal: Int32 = SIGKILL) {
        guard let p = relay else { return }
        relay = nil
        end(p, signal: signal)
    }

    /// SIGSTOP / SIGCONT of the relay this world started: a relay that takes frames and
    /// answers nothing, for a while.
    func freezeRelay() { if let p = relay { kill(p.processIdentifier, SIGSTOP) } }
    func thawRelay() { if let p = relay { kill(p.processIdentifier, SIGCONT) } }

    // MARK: accounts and contacts

    /// `rchat init` for a person, on this world's relay, with receipts sent at once.
    func makeAccount(_ person: String, name: String? = nil, relay: String? = nil, receiptWindowMilliseconds: Int = 0) throws {
        try expectSuccess(box.rchat(person, ["init", "--name", name ?? Self.display(person), "--relay", relay ?? relayAddress]))
        try expectSuccess(box.rchat(person, ["settings", "receipt-window-ms", String(receiptWindowMilliseconds)]))
        if let steadyTraffic { try expectSuccess(box.rchat(person, ["settings", "steady-traffic", steadyTraffic])) }
    }

    /// `steady-traffic` for the accounts made from now on (nil: the product's default, normal).
    /// Off unless a test is about steady traffic: with it every receipt waits for the next slot
    /// end (up to 2.6 s) and a file's chunks are paced, which only the tests about it (and the
    /// simulation) need; the rest would wait minutes in all for nothing they check.
    var steadyTraffic: String? = "off"

    func code(_ person: String) throws -> String {
        let run = try box.rchat(person, ["code"])
        try expectSuccess(run)
        return run.lines[0]
    }

    /// `person` adds `other`'s code.
    func add(_ person: String, _ other: String) throws {
        try expectSuccess(box.rchat(person, ["add", try code(other)]))
    }

    /// Two accounts on this world's relay that added each other.
    func makePair(_ a: String = "alice", _ b: String = "sam") throws {
        try makeAccount(a)
        try makeAccount(b)
        try add(a, b)
        try add(b, a)
    }

    /// Alice and Sam with both engines running and a session between them: a warm-up
    /// message from Alice is Delivered. Returns its id.
    @discardableResult
    func pairWithSession() throws -> String {
        try makePair()
        try startSync("sam")
        try startSync("alice")
        let warmUp = try send("alice", to: "Sam", "warm-up")
        try waitForStatus("alice", "Sam", warmUp, "Delivered")
        return warmUp
    }

    // MARK: sync processes

    /// Starts `rchat sync` for a person (with a long --seconds as a safety net: a process
    /// orphaned by a crashed test run still ends on its own). `fileSizeLimit`: under
    /// RLIMIT_FSIZE of that many bytes (`prlimit` sets it, then execs rchat: the same PID),
    /// so that a write past it fails with EFBIG as a full disk fails with ENOSPC.
    /// `environment`: added to the process's (a failing disk: `FailingDisk.environment`).
    func startSync(_ person: String, seconds: Int = 300, fileSizeLimit: Int? = nil, environment: [String: String] = [:]) throws {
        precondition(syncs[person] == nil, "\(person)'s sync is already running")
        let n = (syncRuns[person] ?? 0) + 1
        syncRuns[person] = n
        let err = box.path("\(person)-sync-\(n).err")
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let p = Process()
        let arguments = ["sync", "--seconds", String(seconds), "--home", box.path("\(person)-home"), "--device-dir", box.path("\(person)-device")]
        if let fileSizeLimit {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            p.arguments = ["--fsize=\(fileSizeLimit)", "--", Binaries.path("rchat")] + arguments
        } else {
            p.executableURL = URL(fileURLWithPath: Binaries.path("rchat"))
            p.arguments = arguments
        }
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        p.standardInput = FileHandle.nullDevice
        try p.run()
        syncs[person] = p
    }

    /// SIGTERM: a clean stop; the sync must exit 0.
    func stopSync(_ person: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let p = syncs.removeValue(forKey: person) else { return XCTFail("\(person)'s sync is not running", file: file, line: line) }
        let status = end(p, signal: SIGTERM)
        XCTAssertEqual(status, 0, "\(person)'s sync after SIGTERM; stderr:\n\(syncLog(person))", file: file, line: line)
    }

    /// Waits up to `timeout` seconds for a sync to end by itself (`--seconds`); its exit
    /// status, or nil if it was still running (it is killed then).
    func waitForSyncToEnd(_ person: String, timeout: Double) -> Int32? {
        guard let p = syncs.removeValue(forKey: person) else { return nil }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while p.isRunning && Date() < deadline { waitUntilDeadline(Date(timeIntervalSinceNow: 0.01)) }
        if p.isRunning {
            end(p, signal: SIGKILL)
            return nil
        }
        p.waitUntilExit()
        return p.terminationReason == .exit ? p.terminationStatus : 128 + p.terminationStatus
    }

    /// SIGKILL: a crash at whatever point the engine is.
    func crashSync(_ person: String) {
        guard let p = syncs.removeValue(forKey: person) else { return }
        end(p, signal: SIGKILL)
    }

    /// SIGSTOP: the sync stays connected but reads, stores and answers nothing.
    func freezeSync(_ person: String) { if let p = syncs[person] { kill(p.processIdentifier, SIGSTOP) } }

    func isSyncRunning(_ person: String) -> Bool { syncs[person]?.isRunning ?? false }

    /// Signals a process this world started and waits (up to 10 s) for it to end; SIGKILL if
    /// it does not. Returns its exit status (nil when it had to be killed).
    @discardableResult
    private func end(_ p: Process, signal: Int32) -> Int32? {
        if p.isRunning { kill(p.processIdentifier, signal) }
        let deadline = Date(timeIntervalSinceNow: 10)
        while p.isRunning && Date() < deadline { waitUntilDeadline(Date(timeIntervalSinceNow: 0.01)) }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            return nil
        }
        p.waitUntilExit()
        return p.terminationReason == .exit ? p.terminationStatus : 128 + p.terminationStatus
    }

    /// Ends everything this world started.
    func shutDown() {
        for (_, p) in syncs { end(p, signal: SIGKILL) }
        syncs.removeAll()
        stopRelay(signal: SIGKILL)
        for p in otherRelays { end(p, signal: SIGKILL) }
        otherRelays.removeAll()
    }

    // MARK: commands

    /// `rchat send`: the new message's id.
    @discardableResult
    func send(_ person: String, to name: String, _ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try box.rchat(person, ["send", name, text])
        try expectSuccess(run, file: file, line: line)
        XCTAssertEqual(run.lines.count, 1, file: file, line: line)
        return run.lines.first ?? ""
    }

    /// The messages of `rchat list NAME --json`; outgoing statuses go into the timeline.
    func list(_ person: String, _ name: String) throws -> [Listed] {
        let run = try box.rchat(person, ["list", name, "--json"])
        try expectSuccess(run)
        var messages: [Listed] = []
        for line in run.lines {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
            guard object["type"] as? String == "message" else { continue }
            let m = Listed(id: try XCTUnwrap(object["id"] as? String, line),
                           direction: try XCTUnwrap(object["direction"] as? String, line),
                           text: try XCTUnwrap(object["text"] as? String, line),
                           status: object["status"] as? String,
                           resent: object["resent"] as? Bool ?? false,
                           waiting: object["waiting"] as? String)
            messages.append(m)
            if m.direction == "out", let status = m.status, timelines[person]?[m.id]?.last != status {
                timelines[person, default: [:]][m.id, default: []].append(status)
            }
        }
        return messages
    }

    /// The status of one outgoing message (nil: not listed).
    func status(_ person: String, _ name: String, _ id: String) throws -> String? {
        try list(person, name).first { $0.id == id }?.status
    }

    func contacts(_ person: String) throws -> [ListedContact] {
        let run = try box.rchat(person, ["contacts", "--json"])
        try expectSuccess(run)
        return try run.lines.map { line in
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
            return ListedContact(name: try XCTUnwrap(object["name"] as? String), state: try XCTUnwrap(object["state"] as? String),
                                 unread: try XCTUnwrap(object["unread"] as? Int))
        }
    }

    func expectSuccess(_ run: Run, file: StaticString = #filePath, line: UInt = #line) throws {
        guard run.status == 0 else {
            XCTFail("rchat exited \(run.status): \(run.stderr)", file: file, line: line)
            throw TimedOut(what: "a successful rchat command", seconds: 0, context: run.stderr)
        }
    }

    // MARK: waiting

    /// Re-checks `condition` about every 50 ms until it holds; throws (with the logs) when
    /// `timeout` seconds pass first.
    func eventually(_ what: String, timeout: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let started = Date()
            if try condition() { return }
            if Date() >= deadline { throw TimedOut(what: what, seconds: timeout, context: diagnostics()) }
            waitUntilDeadline(min(deadline, started.addingTimeInterval(0.05)))
        }
    }

    /// Waits until `person` lists outgoing message `id` with `status` (or a higher one when
    /// `orHigher`).
    func waitForStatus(_ person: String, _ name: String, _ id: String, _ status: String, orHigher: Bool = false, timeout: Double = 15) throws {
        try eventually("\(person)'s message \(id) to \(name) is \(status)", timeout: timeout) {
            guard let now = try self.status(person, name, id) else { return false }
            return orHigher ? (statusRank[now] ?? -1) >= statusRank[status]! : now == status
        }
    }

    // MARK: checks

    /// Every outgoing status seen so far only ever went up.
    func assertStatusesNeverLowered(file: StaticString = #filePath, line: UInt = #line) {
        for (person, byID) in timelines {
            for (id, seen) in byID {
                for (old, new) in zip(seen, seen.dropFirst()) {
                    XCTAssertTrue(laterStatuses[old]?.contains(new) ?? false,
                                  "\(person)'s message \(id) went \(seen.joined(separator: " → "))", file: file, line: line)
                }
                XCTAssertNotNil(laterStatuses[seen[0]], "\(person)'s message \(id): unknown status \(seen[0])", file: file, line: line)
            }
        }
    }

    /// The engine logs and the relay's, for a failure message.
    func diagnostics() -> String {
        var parts: [String] = []
        for person in syncRuns.keys.sorted() {
            for n in 1...(syncRuns[person] ?? 0) {
                parts.append("--- \(person) sync #\(n)\(syncs[person] != nil && n == syncRuns[person] ? " (running)" : "")\n" + text(box.path("\(person)-sync-\(n).err")))
            }
        }
        if relayRuns > 0 {
            for n in 1...relayRuns { parts.append("--- relay #\(n)\n" + text(box.path("relay-\(n).err"))) }
        }
        return parts.joined(separator: "\n")
    }

    func syncLog(_ person: String) -> String {
        guard let n = syncRuns[person] else { return "" }
        return text(box.path("\(person)-sync-\(n).err"))
    }

    /// What the relay this world last started has logged so far.
    func relayLog() -> String { relayRuns > 0 ? text(box.path("relay-\(relayRuns).err")) : "" }

    private func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
}

/// The base of the engine tests: a fresh world per test, everything it started ended after.
class EngineTestCase: XCTestCase {
    var world: EngineWorld!

    override func setUpWithError() throws {
        world = try EngineWorld()
        try world.startRelay()
    }

    override func tearDown() {
        if let world {
            world.shutDown()
            checkStatusHistory(world)
        }
        world = nil
    }

    /// What every test's status history must satisfy; the recovery tests relax it.
    func checkStatusHistory(_ world: EngineWorld) {
        world.assertStatusesNeverLowered()
    }
}
