import Foundation
import RChatCommandLine
import Glibc
import RChatCore
import RChatCrypto
import RChatEngine
import RChatNet
import RChatRelayClient
import RChatWire

/// `rchat-bench requests`: what taking in one message request from a stranger costs an
/// engine with no request stored, and again with `--stored` (10,000) already stored — the
/// reference is the same engine's first figure, so the ratio says whether the cost grows
/// with what strangers have already sent. Every stranger uses the same name, the worst
/// case for picking a free name.
struct RequestBenchmark {
    static let stored = Declared.integer("--stored", in: 1...1_000_000, default: 10_000, help: "requests already stored")
    static let measured = Declared.integer("--measured", in: 10...100_000, default: 300, help: "requests timed")
    static let command = BenchmarkCommand(name: "requests", options: [stored.option, measured.option])

    let stored: Int
    let measured: Int

    init(arguments: [String]) {
        let options = Self.command.parse(arguments)
        stored = options[Self.stored]
        measured = options[Self.measured]
    }

    func run() {
        NetSetup.ignoreBrokenPipes()
        let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let directory = NSTemporaryDirectory() + "rchat-bench-requests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let total = 1 + stored + 2 * measured
        guard let relay = try? Child(binaries.appendingPathComponent("rchat-relay").path,
                                     ["--listen", "127.0.0.1:0", "--key-file", directory + "/relay.key", "--quota", String(total + 1000),
                                      "--request-quota", String(total + 1000)]),
              let line = relay.line(startingWith: "relay "), let address = try? RelayAddress(parsing: String(line.dropFirst(6))) else {
            fail("cannot start rchat-relay next to rchat-bench")
        }
        defer { relay.stop() }
        print("rchat-bench requests: message requests from \(total) strangers (one name) to an in-process engine through rchat-relay (pid \(relay.pid)) on loopback")

        let bob: AccountService, token: InviteToken, bobKey: [UInt8]
        do throws(EngineError) {
            let at = Locations(home: directory + "/bob", deviceDirectory: directory + "/bob-device")
            try AccountService.create(at: at, name: "bob", relay: address)
            bob = try AccountService(locations: at)
            let code = try bob.contactCode()
            token = InviteToken(bytes: code.inviteToken)!
            bobKey = code.accountKey
        } catch {
            fail("cannot set up the account: \(error)")
        }
        print("  sealing \(total) requests…")
        let payloads: [[UInt8]] = (0..<total).map { n in
            let stranger = SigningKey.generate()
            let code = ContactCode.signed(name: "Stranger", account: stranger, device: SigningKey.generate().publicKey,
                                          relay: address, inviteToken: Random.bytes(16))
            let request = MessageRequest(senderCode: code.text, messageID: .random(), createdAt: 1_700_000_000, content: .text("hello \(n)"))
            guard let sealed = try? request.sealed(from: stranger, to: bobKey) else { fail("cannot seal a request") }
            return sealed
        }
        guard let sender = try? RelayClient.connect(to: address, mailboxKey: .generate()) else { fail("cannot connect a sender") }
        defer { sender.close() }

        let events = EventRecorder()
        let side = Side(bob, events, log: { _ in })
        guard side.start() else { fail("cannot start the engine") }
        defer { side.stop() }

        // The engine registers its invite once connected: until then a request is refused.
        let registeredBy = Date(timeIntervalSinceNow: 30)
        registering: while true {
            guard Date() < registeredBy else { fail("the engine did not register its invite within 30 s") }
            do {
                let seq = try sender.sendRequest(to: token, payloads[0])
                while let event = sender.nextEvent(timeout: 5) {
                    if case .sent(seq, _) = event { break registering }
                    if case .refused(seq, _) = event { break }
                }
            } catch {
                fail("the relay connection broke: \(error)")
            }
            usleep(20_000)
        }
        while events.newMessages < 1 {
            guard Date() < registeredBy else { fail("the engine did not store the first request within 30 s") }
            usleep(2_000)
        }
        var sent = 1
        /// Sends the next `count` requests and returns the seconds until the engine has
        /// stored them all.
        func deliver(_ count: Int) -> Double {
            let before = events.newMessages
            let start = monotonicNanoseconds()
            for payload in payloads[sent..<(sent + count)] {
                do { try sender.sendRequest(to: token, payload, flush: false) } catch { fail("the relay connection broke: \(error)") }
            }
            do { try sender.flush() } catch { fail("the relay connection broke: \(error)") }
            sent += count
            let deadline = Date(timeIntervalSinceNow: 600)
            while events.newMessages < before + count {
                guard Date() < deadline else { fail("the engine stored \(events.newMessages - before) of \(count) requests in 600 s") }
                usleep(2_000)
            }
            return Double(monotonicNanoseconds() - start) / 1e9
        }

        let empty = deliver(measured)
        print(String(format: "  with none stored:    %.2f ms per request (%d requests)", empty * 1000 / Double(measured), measured))
        let fill = deliver(stored)
        print(String(format: "  storing %d more:  %.1f s", stored, fill))
        let full = deliver(measured)
        print(String(format: "  with %d stored: %.2f ms per request (%d requests)", stored + measured, full * 1000 / Double(measured), measured))
        print(String(format: "  ratio (with %d stored / with none): %.2f×", stored + measured, full / empty))
    }

    private func fail(_ message: String) -> Never { benchmarkFailure("requests", message) }
}
