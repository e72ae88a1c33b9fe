import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
@testable import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// Issue 5, behaviour 8: a stolen copy of Sam's account keys, without his device key, can
/// never make Alice's engine resend anything by itself. An attacker built from the relay
/// client and the conversation cryptography holds Sam's account key and a device key of its
/// own (certified by that account key), meets Alice's engine at a real relay, completes a
/// handshake, and sends could-not-read notices: one signed by the ACCOUNT key, one by a
/// random key. Each changes nothing but a log line. Then, as a check that the attacker's
/// frames do reach Alice, a notice signed by its own certified device key: Not delivered
/// with Resend — the new-phone path, never Resent.
final class RecoveryForgedNoticeTests: XCTestCase {
    var directory: URL!
    var relay: Process?
    var engines: [EngineThread] = []
    var attackerClient: RelayClient?
    let logLines = LogLines()

    final class LogLines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-forged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        attackerClient?.close()
        for engine in engines { engine.stop() }
        if let relay, relay.isRunning {
            kill(relay.processIdentifier, SIGKILL)
            relay.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: helpers

    /// The built `rchat-relay`, beside the test bundle.
    static var relayBinary: String? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates: [URL] = []
        for _ in 0..<4 { candidates.append(dir); dir = dir.deletingLastPathComponent() }
        for bundle in Bundle.allBundles { candidates.append(bundle.bundleURL.deletingLastPathComponent()) }
        return candidates.map { $0.appendingPathComponent("rchat-relay").path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func startRelay() throws -> RelayAddress {
        let binary = try XCTUnwrap(Self.relayBinary, "build rchat-relay first")
        let out = directory.appendingPathComponent("relay.out"), err = directory.appendingPathComponent("relay.err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["--listen", "127.0.0.1:0", "--key-file", directory.appendingPathComponent("relay.key").path]
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        p.standardInput = FileHandle.nullDevice
        try p.run()
        relay = p
        var line = ""
        try untilDeadline("the relay prints its address", seconds: 10) {
            line = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
            return line.hasSuffix("\n")
        }
        XCTAssertTrue(line.hasPrefix("relay "), line)
        return try RelayAddress(parsing: String(line.dropFirst("relay ".count).dropLast()))
    }

    /// Re-checks `condition` about every 20 ms until it holds or `seconds` pass (then throws).
    func untilDeadline(_ what: String, seconds: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while try !condition() {
            guard Date() < deadline else {
                throw NSError(domain: "timed out waiting for: \(what)\n" + logLines.all.joined(separator: "\n"), code: 1)
            }
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 0.02)
        }
    }

    func account(_ name: String, relay: RelayAddress) throws -> AccountService {
        let locations = Locations(home: directory.appendingPathComponent("\(name)-home").path,
                                  deviceDirectory: directory.appendingPathComponent("\(name)-device").path)
        try AccountService.create(at: locations, name: name, relay: relay)
        let service = try AccountService(locations: locations)
        try service.setSetting("receipt-window-ms", "0")
        return service
    }

    func startEngine(_ service: AccountService, logged: Bool) throws -> EngineThread {
        let lines = logLines
        let name = try service.identity().name
        let engine = try Engine(account: AccountService(locations: service.locations)) { line in
            if logged { lines.append("\(name): \(line)") }
        }
        let thread = EngineThread(engine: engine)
        thread.start(name: "engine-\(name)")
        engines.append(thread)
        return thread
    }

    func messages(_ service: AccountService, _ contact: String) throws -> [MessageItem] {
        try service.conversation(contact).compactMap { if case .message(let m) = $0 { return m } else { return nil } }
    }

    func rows(_ service: AccountService, _ contact: String) throws -> [SystemRow] {
        try service.conversation(contact).compactMap { if case .row(let r) = $0 { return r } else { return nil } }
    }

    func waitForStatus(_ service: AccountService, _ contact: String, _ ids: [MessageID], _ status: MessageStatus) throws {
        try untilDeadline("\(ids.map(\.hex)) are \(status.rawValue)", seconds: 20) {
            let listed = try messages(service, contact)
            return ids.allSatisfy { id in listed.first { $0.id == id }?.status == status }
        }
    }

    /// The attacker's next event of interest, skipping the rest.
    func nextEvent(_ client: RelayClient, _ what: String, _ match: (RelayEvent) -> Bool) throws -> RelayEvent {
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline {
            guard let event = client.nextEvent(timeout: deadline.timeIntervalSinceNow) else { break }
            if case .closed = event { XCTFail("the relay closed the attacker's connection: \(event)"); break }
            if match(event) { return event }
        }
        throw NSError(domain: "the attacker did not see: \(what)\n" + logLines.all.joined(separator: "\n"), code: 1)
    }

    // MARK: the test

    func testNoticesNotSignedByAnyCertifiedDeviceKeyChangeNothingButALogLine() throws {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let sam = try account("Sam", relay: address)
        let samIdentity = try sam.identity()
        let aliceIdentity = try alice.identity()
        _ = try alice.addContact(samIdentity.contactCode(device: sam.device), name: nil)
        _ = try sam.addContact(aliceIdentity.contactCode(device: alice.device), name: nil)

        // A conversation with a session; then Sam goes away and Alice writes two messages
        // that the relay holds for him.
        let aliceEngine = try startEngine(alice, logged: true)
        let samEngine = try startEngine(sam, logged: false)
        let warmUp = try alice.send(to: "Sam", text: "warm-up")
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", [warmUp], .delivered)
        XCTAssertTrue(samEngine.stop())
        let held = [try alice.send(to: "Sam", text: "held 1"), try alice.send(to: "Sam", text: "held 2")]
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", held, .sent)

        // The attacker: Sam's stolen account key, its own device key (which the stolen key
        // can certify), a mailbox of its own; it presents the codes of a side that started over.
        let stolen = samIdentity.accountKey
        let attackerDevice = SigningKey.generate()
        let secret = try ConversationSecret(myAccount: stolen, peerAccountKey: aliceIdentity.accountKey.publicKey)
        let client = try RelayClient.connect(to: address, mailboxKey: SigningKey.generate(), timeout: 10)
        attackerClient = client
        try client.present(RendezvousCode.presented(for: secret, at: Int64(Date().timeIntervalSince1970), reconnectCounter: nil).map(\.bytes))
        guard case let .linked(link, _, _) = try nextEvent(client, "a link with Alice", {
            if case .linked = $0 { return true } else { return false }
        }) else { return XCTFail() }

        let me = Handshake.LocalIdentity(account: stolen, device: attackerDevice)
        let pinnedAlice = Handshake.PinnedKeys(accountKey: aliceIdentity.accountKey.publicKey, deviceKey: alice.device.publicKey)
        func linkPayload(_ wanted: UInt8) throws -> [UInt8] {
            guard case let .delivery(d) = try nextEvent(client, "a link frame of type \(wanted)", {
                if case let .delivery(d) = $0, d.link == link, d.payload.first == wanted { return true } else { return false }
            }) else { throw NSError(domain: "no frame", code: 1) }
            return Array(d.payload.dropFirst())
        }
        let session: Session
        if Handshake.Role.of(myAccountKey: stolen.publicKey, peerAccountKey: aliceIdentity.accountKey.publicKey) == .initiator {
            let initiator = try Handshake.Initiator(me: me, peer: pinnedAlice, reconnectCounter: nil)
            _ = try client.send(on: link, LinkFrame.handshakeFirst(initiator.firstMessage()).encoded)
            session = try initiator.finish(try linkPayload(2))
        } else {
            let responder = try Handshake.Responder(me: me, peer: pinnedAlice, reconnectCounter: nil)
            let (reply, s) = try responder.respond(to: try linkPayload(1))
            _ = try client.send(on: link, LinkFrame.handshakeReply(reply).encoded)
            session = s
        }
        XCTAssertEqual(session.peer.accountKey, aliceIdentity.accountKey.publicKey)
        try untilDeadline("Alice's engine starts a session with the attacker", seconds: 20) {
            logLines.all.filter { $0.contains("secure session with Sam started") }.count >= 2
        }

        var sequence: UInt64 = 0
        func sendNotice(signedBy key: SigningKey) throws {
            let notice = CouldNotReadNotice(messageIDs: held, conversation: secret, time: Int64(Date().timeIntervalSince1970))
            let envelope = Envelope.seal(kind: .notice, messageID: .random(), sequence: sequence, body: notice.signed(by: key),
                                         keys: session.keys, conversation: secret)
            sequence += 1
            _ = try client.send(on: link, LinkFrame.envelope(envelope).encoded)
        }
        let before = try alice.conversation("Sam")
        XCTAssertEqual(try messages(alice, "Sam").filter { held.contains($0.id) }.map(\.status), [.sent, .sent])

        // Signed by the stolen account key, then by a random key: rejected, nothing changes.
        try sendNotice(signedBy: stolen)
        try sendNotice(signedBy: SigningKey.generate())
        let rejection = "Alice: rejected a could-not-read notice from Sam not signed by their device key"
        try untilDeadline("two rejected notices in Alice's log", seconds: 20) {
            logLines.all.filter { $0.hasPrefix(rejection) }.count == 2 || logLines.all.contains { $0.contains("could not read") }
        }
        XCTAssertEqual(logLines.all.filter { $0.hasPrefix(rejection) }.count, 2, logLines.all.joined(separator: "\n"))
        XCTAssertEqual(try alice.conversation("Sam"), before, "a forged notice changes no status and adds no row")
        XCTAssertFalse(logLines.all.contains { $0.contains("could not read") }, logLines.all.joined(separator: "\n"))

        // The control: a notice signed by the attacker's own certified (unpinned) device key
        // is read — Not delivered with Resend — and still nothing is resent automatically.
        try sendNotice(signedBy: attackerDevice)
        try waitForStatus(alice, "Sam", held, .notDelivered)
        let after = try messages(alice, "Sam")
        XCTAssertFalse(after.contains { $0.resent }, "\(after)")
        let rows = try rows(alice, "Sam")
        XCTAssertEqual(rows.map(\.text), ["2 messages couldn't be read on Sam's phone."])
        XCTAssertEqual(rows.first?.action, .resend)
        XCTAssertEqual(Set(rows.first?.messageIDs ?? []), Set(held))
        XCTAssertTrue(logLines.all.contains { $0.contains("Sam could not read 2 message(s): 0 resent automatically, 2 not delivered") },
                      logLines.all.joined(separator: "\n"))
        XCTAssertEqual(logLines.all.filter { $0.hasPrefix(rejection) }.count, 2)
        XCTAssertTrue(aliceEngine.stop())
    }
}
