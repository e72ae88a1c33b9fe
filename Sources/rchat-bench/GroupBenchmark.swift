import Foundation
import Glibc
import RChatCommandLine
import RChatCore
import RChatEngine
import RChatNet
import RChatStore

/// `rchat-bench group` (issue 30, "Speed"): one account sends to a group of each size in
/// `--sizes` (in-process engines, one per member, through one real `rchat-relay` on
/// loopback; a size counts the sender): the sender's engine CPU per message per member beside
/// a one-to-one message's in the same run (target ≤ 1.2×) and each message's time until every
/// member's Delivered (median; target for 100 members ≤ 2 s on loopback), messages sent one by
/// one, each once the one before is Delivered by all, so a figure is a message's own, not a
/// queue's; then Delivered receipts taken back per second at the sender, `--messages` written
/// at once.
struct GroupBenchmark {
    static let messages = Declared.integer("--messages", in: 1...100_000, default: 200, help: "messages sent to each group")
    static let sizes = Declared<String?>.text("--sizes", "N,N", help: "members of each group, the sender included (default 20,100)")
    static let verbose = Option.flag("--verbose", help: "the engines' logs on stderr")
    static let command = BenchmarkCommand(name: "group", options: [messages.option, sizes.option, verbose])

    let messages: Int
    let sizes: [Int]
    let verbose: Bool

    init(arguments: [String]) {
        let options = Self.command.parse(arguments)
        messages = options[Self.messages]
        let text = options[Self.sizes] ?? "20,100"
        let parsed = text.split(separator: ",").compactMap { Int($0) }
        guard !parsed.isEmpty, parsed.count == text.split(separator: ",").count, parsed.allSatisfy({ (2...GroupRoster.memberLimit).contains($0) }) else {
            FileHandle.standardError.write(Data("rchat-bench group: --sizes takes group sizes from 2 to \(GroupRoster.memberLimit), comma-separated\n".utf8))
            exit(2)
        }
        sizes = parsed
        verbose = options.has(Self.verbose)
    }

    private func fail(_ message: String) -> Never { benchmarkFailure("group", message) }

    func run() {
        NetSetup.ignoreBrokenPipes()
        let relayBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("rchat-relay").path
        print("rchat-bench group: \(messages) messages of 256 B to groups of \(sizes.map(String.init).joined(separator: " and ")) members,"
              + " each member an in-process engine, through one rchat-relay on loopback; each message sent once the one before is Delivered")
        for size in sizes { measure(size, relayBinary: relayBinary) }
    }

    private func measure(_ size: Int, relayBinary: String) {
        let directory = NSTemporaryDirectory() + "rchat-bench-group-\(getpid())-\(size)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Every engine connects from 127.0.0.1: as many connections from it as there are members.
        guard let relay = try? Child(relayBinary, ["--listen", "127.0.0.1:0", "--key-file", directory + "/relay.key",
                                                  "--max-held-bytes", String(1 << 34), "--quota-bytes", String(1 << 40),
                                                  "--max-connections-per-address", String(4 * size)]),
              let line = relay.line(startingWith: "relay "), let address = try? RelayAddress(parsing: String(line.dropFirst(6))) else {
            fail("cannot start \(relayBinary)")
        }
        defer { relay.stop() }
        let verbose = self.verbose
        let names = (1..<size).map { "m\($0)" }
        var sides: [Side] = []
        let senderCommands: AccountService
        do throws(EngineError) {
            let at = { (name: String) in Locations(home: directory + "/" + name, deviceDirectory: directory + "/" + name + "-device") }
            try AccountService.create(at: at("sender"), name: "sender", relay: address)
            let sender = try AccountService(locations: at("sender"))
            try sender.setSetting(.steadyTraffic, "off")
            var members: [AccountService] = []
            for name in names {
                try AccountService.create(at: at(name), name: name, relay: address)
                let member = try AccountService(locations: at(name))
                try member.setSetting(.receiptWindow, "0")
                try member.setSetting(.steadyTraffic, "off")
                _ = try sender.addContact(try member.contactCode(), name: name)
                _ = try member.addContact(try sender.contactCode(), name: "sender")
                members.append(member)
            }
            senderCommands = try AccountService(locations: at("sender"))
            for (account, name) in zip([sender] + members, ["sender"] + names) {
                let events = EventRecorder()
                sides.append(Side(account, events, log: { if verbose { FileHandle.standardError.write(Data("  [\(name): \($0)]\n".utf8)) } }))
            }
        } catch {
            fail("cannot set up the accounts: \(error)")
        }
        guard sides.allSatisfy({ $0.start() }) else { fail("cannot start the engines") }
        defer { for side in sides { side.stop() } }
        let sender = sides[0]

        // Sessions first: a one-to-one message to each member, then the group, held by all.
        let setupStart = Date()
        var warmUps: [MessageID] = []
        for name in names {
            guard let id = try? senderCommands.send(to: name, content: .text(EngineBenchmark.text(0))) else { fail("cannot send to \(name)") }
            warmUps.append(id)
        }
        guard sender.events.wait(timeout: 120, until: { events in warmUps.allSatisfy { events.time($0, .delivered) != nil } }) else {
            fail("no session with every member within 120 s (try --verbose)")
        }
        guard let group = try? senderCommands.createGroup(name: "Bench", members: names) else { fail("cannot make the group") }
        guard waitUntil(timeout: 120, { sides.dropFirst().allSatisfy { (try? $0.account.group(named: "Bench")) != nil } }) else {
            fail("not every member holds the group within 120 s")
        }
        print("")
        print("(\(size) members, the sender included) set up in \(String(format: "%.1f", Date().timeIntervalSince(setupStart))) s: a session with each, the group held by each")

        // One-to-one reference, then the group: each message sent once the one before is Delivered.
        let direct = series(count: messages, sender: sender) { try senderCommands.send(to: names[0], content: .text(EngineBenchmark.text($0))) }
        let fanned = series(count: messages, sender: sender) { try senderCommands.send(toGroup: group, text: EngineBenchmark.text($0)) }
        guard let direct, let fanned else { fail("a message was not Delivered within 60 s (try --verbose)") }

        let perMessageDirect = direct.senderCPU / Double(messages)
        let perMemberGroup = fanned.senderCPU / Double(messages * names.count)
        print("  sender CPU per message per member (ms)   group \(String(format: "%.3f", perMemberGroup))   one-to-one \(String(format: "%.3f", perMessageDirect))"
              + "   ratio \(String(format: "%.2f", perMemberGroup / perMessageDirect))×   target ≤ 1.2×")
        print("  send → every member Delivered (ms)       p50 \(String(format: "%.1f", fanned.p50))  p99 \(String(format: "%.1f", fanned.p99))"
              + "   one-to-one p50 \(String(format: "%.1f", direct.p50))" + (size >= 100 ? "   target p50 ≤ 2000 ms" : ""))
        guard let burst = burst(count: messages, sender: sender, send: { try senderCommands.send(toGroup: group, text: EngineBenchmark.text($0)) })
        else { fail("a burst was not all Delivered within 120 s") }
        print("  Delivered receipts taken at the sender   \(Int(Double(messages * names.count) / burst))/s"
              + "   (\(messages) written at once to \(names.count) members: all Delivered in \(String(format: "%.2f", burst)) s)")
    }

    /// Sends `count` messages one by one, each once the one before is Delivered: the sender
    /// engine's CPU over the whole series (ms), each message's time to Delivered, and the
    /// series' wall time. Nil when one is not Delivered within 60 s.
    private func series(count: Int, sender: Side, send: (Int) throws -> MessageID) -> (senderCPU: Double, p50: Double, p99: Double, seconds: Double)? {
        let before = ThreadCPU.now(child: 0)
        let start = monotonicNanoseconds()
        var latencies: [Double] = []
        for i in 0..<count {
            let t0 = monotonicNanoseconds()
            guard let id = try? send(i + 1) else { return nil }
            guard sender.events.wait(timeout: 60, until: { $0.time(id, .delivered) != nil }), let t = sender.events.time(id, .delivered) else { return nil }
            latencies.append(Double(t &- t0) / 1e6)
        }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let cpu = ThreadCPU.now(child: 0).since(before, childName: "none").filter { $0.0 == "engine-sender" }.map(\.1).reduce(0, +)
        latencies.sort()
        return (cpu, latencies[latencies.count / 2], latencies[min(latencies.count - 1, latencies.count * 99 / 100)], seconds)
    }

    /// Writes `count` messages at once; seconds until every member's Delivered came for all.
    private func burst(count: Int, sender: Side, send: (Int) throws -> MessageID) -> Double? {
        let start = monotonicNanoseconds()
        var ids: [MessageID] = []
        for i in 0..<count {
            guard let id = try? send(i + 1) else { return nil }
            ids.append(id)
        }
        guard sender.events.wait(timeout: 120, until: { events in ids.allSatisfy { events.time($0, .delivered) != nil } }) else { return nil }
        let last = ids.compactMap { sender.events.time($0, .delivered) }.max() ?? start
        return Double(last &- start) / 1e9
    }

    private func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() {
            if Date() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }
}
