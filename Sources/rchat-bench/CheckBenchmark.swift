import Foundation
import RChatCommandLine
import Glibc
import RChatCore
import RChatEngine
import RChatNet
import RChatSQL
import RChatStore

/// `rchat-bench check`: a whole `rchat check` process — start, connect, prove the mailbox,
/// collect N held messages, store them with the saved state, alert, disconnect — timed
/// from outside (target: 1,000 messages in under 0.5 s). The reference, measured in the
/// same run: storing the same N rows one per transaction, as a client without batching would.
struct CheckBenchmark {
    static let messages = Declared.integer("--messages", in: 1...1_000_000, default: 1_000, help: "messages held for the check")
    static let runs = Declared.integer("--runs", in: 1...100, default: 3, help: "checks timed (the median is shown)")
    static let command = BenchmarkCommand(name: "check", options: [messages.option, runs.option])

    let messages: Int
    let runs: Int

    init(arguments: [String]) {
        let options = Self.command.parse(arguments)
        messages = options[Self.messages]
        runs = options[Self.runs]
    }

    func run() {
        NetSetup.ignoreBrokenPipes()
        let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let directory = NSTemporaryDirectory() + "rchat-bench-check-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard let relay = try? Child(binaries.appendingPathComponent("rchat-relay").path,
                                     ["--listen", "127.0.0.1:0", "--key-file", directory + "/relay.key", "--quota", String(messages * (runs + 1))]),
              let line = relay.line(startingWith: "relay "), let address = try? RelayAddress(parsing: String(line.dropFirst(6))) else {
            fail("cannot start rchat-relay next to rchat-bench")
        }
        defer { relay.stop() }
        print("rchat-bench check: `rchat check --print` collecting \(messages) held messages of 256 B from rchat-relay (pid \(relay.pid)) on loopback, \(runs) runs")

        var wall: [Double] = []
        var reference: [Double] = []
        for run in 0..<runs {
            let home = "\(directory)/run\(run)"
            let aliceAt = Locations(home: home + "/alice", deviceDirectory: home + "/alice-device")
            let bobAt = Locations(home: home + "/bob", deviceDirectory: home + "/bob-device")
            let alice: AccountService, bob: AccountService
            do throws(EngineError) {
                try AccountService.create(at: aliceAt, name: "alice", relay: address)
                try AccountService.create(at: bobAt, name: "bob", relay: address)
                alice = try AccountService(locations: aliceAt)
                bob = try AccountService(locations: bobAt)
                _ = try alice.addContact(try bob.contactCode(), name: "bob")
                _ = try bob.addContact(try alice.contactCode(), name: "alice")
            } catch {
                fail("cannot set up the accounts: \(error)")
            }
            let aliceEvents = EventRecorder(), bobEvents = EventRecorder()
            guard let aliceEngine = try? LiveEngine(alice, aliceEvents, log: { _ in }),
                  let bobEngine = try? LiveEngine(bob, bobEvents, log: { _ in }) else { fail("cannot start the engines") }
            aliceEngine.start()
            bobEngine.start()
            guard let warm = try? alice.send(to: "bob", content: .text("warm-up")),
                  aliceEvents.wait(timeout: 30, until: { $0.time(warm, .delivered) != nil }) else { fail("no session within 30 s") }
            bobEngine.stop()

            // Alice's messages wait at the relay for Bob, as while his rChat is closed. Queued
            // through a connection of their own, as `rchat send` would: the running engine's
            // connection is its thread's alone (a transaction opened on it from here made the
            // engine's next one fail).
            var last = warm
            do {
                let commands = try Store(home: aliceAt.home)
                defer { commands.close() }
                guard let contact = try commands.contact(named: "bob") else { fail("no contact bob") }
                let now = Int64(Date().timeIntervalSince1970)
                try commands.transaction { tx in
                    for i in 0..<messages {
                        last = MessageID.random()
                        try tx.insertOutgoing(contact: contact.id, id: last, content: .text(EngineBenchmark.text(i)), at: now)
                    }
                }
            } catch {
                fail("cannot queue: \(error)")
            }
            aliceEngine.engine.wake()
            let lastID = last
            guard aliceEvents.wait(timeout: 60, until: { $0.time(lastID, .sent) != nil }) else { fail("the relay did not take them in 60 s") }
            aliceEngine.stop()

            let start = monotonicNanoseconds()
            let check = Process()
            check.executableURL = binaries.appendingPathComponent("rchat")
            check.arguments = ["check", "--print", "--home", bobAt.home, "--device-dir", bobAt.deviceDirectory]
            let out = Pipe()
            check.standardOutput = out
            check.standardError = FileHandle.nullDevice
            guard (try? check.run()) != nil else { fail("cannot run rchat check") }
            let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            check.waitUntilExit()
            let seconds = Double(monotonicNanoseconds() - start) / 1e9
            guard check.terminationStatus == 0 else { fail("rchat check exited \(check.terminationStatus)") }
            let stored = ((try? bob.store.conversationCount(contact: bob.contact(named: "alice").id)) ?? 0) - 1
            guard stored == messages else { fail("the check stored \(stored) of \(messages)") }
            wall.append(seconds)
            reference.append(referenceSeconds(directory: home))
            print(String(format: "  run %d: %.3f s wall, %d stored, alerts printed: %@", run + 1, seconds, stored,
                         printed.split(separator: "\n").joined(separator: " | ")))
        }
        wall.sort()
        reference.sort()
        let median = wall[wall.count / 2], referenceMedian = reference[reference.count / 2]
        print(String(format: "whole check, median of %d: %.3f s   target < 0.500 s   %@", runs, median, median < 0.5 ? "met" : "NOT met"))
        print(String(format: "reference: the same %d rows stored one per transaction: %.3f s   ratio %.1f×",
                     messages, referenceMedian, referenceMedian / median))
    }

    /// 256-byte rows, one per transaction, WAL with synchronous=FULL, in the same directory.
    private func referenceSeconds(directory: String) -> Double {
        guard let db = try? Database(path: directory + "/reference.db") else { return 0 }
        defer { db.close() }
        _ = try? db.query("PRAGMA journal_mode = WAL")
        try? db.execute("PRAGMA synchronous = FULL")
        try? db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        let body = [UInt8](repeating: 0x5A, count: 256)
        let start = monotonicNanoseconds()
        for _ in 0..<messages { _ = try? db.transaction { try db.execute("INSERT INTO t (body) VALUES (?)", [.blob(body)]) } }
        return Double(monotonicNanoseconds() - start) / 1e9
    }

    private func fail(_ message: String) -> Never { benchmarkFailure("check", message) }
}
