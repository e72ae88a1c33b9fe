import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
@testable import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// Engines in this process talking through a real `rchat-relay`, with a client of the relay
/// protocol standing in for one side where a test needs a peer that misbehaves.
class RelayEngineTestCase: XCTestCase {
    var directory: URL!
    var relay: Process?
    var engines: [EngineThread] = []
    var rawClients: [RelayClient] = []
    let logLines = LogLines()

    final class LogLines: Sendable {
        private let lines = Locked<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for client in rawClients { client.close() }
        for engine in engines { engine.stop() }
        if let relay, relay.isRunning {
            kill(relay.processIdentifier, SIGKILL)
            relay.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: helpers

    /// The built `rchat-relay`, beside the test bundle.
    static var relayBinary: String? { binary("rchat-relay") }

    /// A built executable of this package, beside the test bundle.
    static func binary(_ name: String) -> String? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates: [URL] = []
        for _ in 0..<4 { candidates.append(dir); dir = dir.deletingLastPathComponent() }
        for bundle in Bundle.allBundles { candidates.append(bundle.bundleURL.deletingLastPathComponent()) }
        return candidates.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func startRelay(_ arguments: [String] = []) throws -> RelayAddress {
        let binary = try XCTUnwrap(Self.relayBinary, "build rchat-relay first")
        let out = directory.appendingPathComponent("relay.out"), err = directory.appendingPathComponent("relay.err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["--listen", "127.0.0.1:0", "--key-file", directory.appendingPathComponent("relay.key").path] + arguments
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

    /// A new account named `name`, in folders named `folder` (default: the name).
    func account(_ name: String, relay: RelayAddress, folder: String? = nil) throws -> AccountService {
        let folder = folder ?? name
        let locations = Locations(home: directory.appendingPathComponent("\(folder)-home").path,
                                  deviceDirectory: directory.appendingPathComponent("\(folder)-device").path)
        try AccountService.create(at: locations, name: name, relay: relay)
        let service = try AccountService(locations: locations)
        try service.setSetting("receipt-window-ms", "0")
        // Off unless a test is about steady traffic (SteadyTrafficEngineTests turns it on):
        // with it every receipt waits for a slot end, which the rest check nothing about.
        try service.setSetting("steady-traffic", "off")
        return service
    }

    func startEngine(_ service: AccountService, logged: Bool, configure: (Engine) -> Void = { _ in }) throws -> EngineThread {
        let lines = logLines
        let name = try service.identity().name
        let engine = try Engine(account: AccountService(locations: service.locations)) { line in
            if logged { lines.append("\(name): \(line)") }
        }
        configure(engine)
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

    /// A raw client's next event of interest, skipping the rest.
    func nextEvent(_ client: RelayClient, _ what: String, _ match: (RelayEvent) -> Bool) throws -> RelayEvent {
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline {
            guard let event = client.nextEvent(timeout: deadline.timeIntervalSinceNow) else { break }
            if case .closed = event { XCTFail("the relay closed the raw client's connection: \(event)"); break }
            if match(event) { return event }
        }
        throw NSError(domain: "the raw client did not see: \(what)\n" + logLines.all.joined(separator: "\n"), code: 1)
    }

    /// The payload of the next frame of `type` (1: handshake first, 2: reply) on `link`.
    func linkPayload(_ client: RelayClient, _ link: LinkID, _ type: UInt8) throws -> [UInt8] {
        guard case let .delivery(d) = try nextEvent(client, "a link frame of type \(type)", {
            if case let .delivery(d) = $0, d.link == link, (try? Padding.unpadded(d.payloadBytes))?.first == type { return true } else { return false }
        }) else { throw NSError(domain: "no frame of type \(type)", code: 1) }
        return Array(try Padding.unpadded(d.payloadBytes).dropFirst())
    }

    /// A raw client's next link, with the rendezvous code it was made on.
    func nextLink(_ client: RelayClient) throws -> (link: LinkID, code: [UInt8]) {
        guard case let .linked(link, code) = try nextEvent(client, "a link", {
            if case .linked = $0 { return true } else { return false }
        }) else { throw NSError(domain: "no link", code: 1) }
        return (link, code)
    }

    /// Alice, and Sam whose key sorts first (he initiates every handshake with her), who
    /// added each other. Roles follow the account keys, one pair in two; each try is a new
    /// pair (a new Alice too: against an Alice whose key sorts near the end, a new Sam alone
    /// would almost never sort first).
    func aliceAndInitiatingSam(relay: RelayAddress) throws -> (alice: AccountService, sam: AccountService) {
        for n in 0..<64 {
            let alice = try account("Alice", relay: relay, folder: "Alice\(n)")
            let sam = try account("Sam", relay: relay, folder: "Sam\(n)")
            let samKey = try sam.identity().accountKey.publicKey, aliceKey = try alice.identity().accountKey.publicKey
            guard Handshake.Role.of(myAccountKey: samKey, peerAccountKey: aliceKey) == .initiator else { continue }
            _ = try alice.addContact(try sam.identity().contactCode(device: sam.device), name: "Sam")
            _ = try sam.addContact(try alice.identity().contactCode(device: alice.device), name: "Alice")
            return (alice, sam)
        }
        throw NSError(domain: "no pair in 64 tries had Sam's account key sort first", code: 1)
    }

    /// Both engines run until a warm-up message from Alice is Delivered; then Sam's stops.
    /// Returns Alice's engine, still running.
    func sessionThenSamAway(alice: AccountService, sam: AccountService, samLogged: Bool) throws -> EngineThread {
        let aliceEngine = try startEngine(alice, logged: true)
        let samEngine = try startEngine(sam, logged: samLogged)
        let warmUp = try alice.send(to: "Sam", content: .text("warm-up"))
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", [warmUp], .delivered)
        XCTAssertTrue(samEngine.stop())
        return aliceEngine
    }

    /// Alice's running engine, and Sam's keys in a raw client of the relay protocol (starting
    /// over) in a session with it: `send` seals what it is given, in order, as Sam's engine
    /// would never send it.
    /// `prepare` runs on Alice's account before her engine starts (settings, say).
    /// `hostileSamMeetsAlice`, Alice holding a group with Bob too (Sam is not in it) and a
    /// message of hers there: what Sam must never reach into.
    func hostileSamMeetsAliceWithAGroup() throws
        -> (alice: AccountService, send: (EnvelopeKind, MessageID, [UInt8]) throws -> Void, inGroup: MessageID) {
        var inGroup: MessageID?
        let (alice, _, send) = try hostileSamMeetsAlice { alice in
            let bob = try self.account("Bob", relay: try alice.identity().relay)
            _ = try alice.addContact(try bob.identity().contactCode(device: bob.device), name: nil)
            let group = try alice.createGroup(name: "Friends", members: ["Bob"])
            inGroup = try alice.send(toGroup: group, text: "the group's plans")
        }
        return (alice, send, try XCTUnwrap(inGroup))
    }

    func hostileSamMeetsAlice(prepare: (AccountService) throws -> Void = { _ in }) throws
        -> (alice: AccountService, engine: EngineThread, send: (EnvelopeKind, MessageID, [UInt8]) throws -> Void) {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        try prepare(alice)
        let sam = try account("Sam", relay: address)
        let samIdentity = try sam.identity(), aliceIdentity = try alice.identity()
        _ = try alice.addContact(samIdentity.contactCode(device: sam.device), name: nil)
        _ = try sam.addContact(aliceIdentity.contactCode(device: alice.device), name: nil)
        let engine = try sessionThenSamAway(alice: alice, sam: sam, samLogged: false)
        let (client, link, session, secret) = try rawSessionStartingOver(as: sam, mailboxKey: SigningKey.generate(), with: alice, relay: address)
        let peer = PeerSession(session)
        return (alice, engine, { kind, id, body in
            let envelope = peer.seal(kind, id: id, body, conversation: secret)
            _ = try client.send(on: link, LinkFrame.envelope(envelope).encoded)
        })
    }

    /// `peer`'s keys in a raw client of the relay protocol that started over (it presents
    /// recovery codes), in a fresh session with `engineSide`'s running engine: linked, and the
    /// handshake done in whichever role its account key gives it.
    func rawSessionStartingOver(as peer: AccountService, mailboxKey: SigningKey, with engineSide: AccountService,
                                relay address: RelayAddress) throws -> (client: RelayClient, link: LinkID, session: Session, secret: ConversationSecret) {
        let peerIdentity = try peer.identity(), engineIdentity = try engineSide.identity()
        let secret = try ConversationSecret(myAccount: peerIdentity.accountKey, peerAccountKey: engineIdentity.accountKey.publicKey)
        let client = try RelayClient.connect(to: address, mailboxKey: mailboxKey, timeout: 10)
        rawClients.append(client)
        try client.present(RendezvousCode.presented(for: secret, at: Int64(Date().timeIntervalSince1970), .startedOver).map(\.bytes))
        let (link, code) = try nextLink(client)
        let me = Handshake.LocalIdentity(account: peerIdentity.accountKey, device: peer.device)
        let pinned = Handshake.PinnedKeys(accountKey: engineIdentity.accountKey.publicKey, deviceKey: engineSide.device.publicKey)
        let prologue = Handshake.linkPrologue(code: code)
        if Handshake.Role.of(myAccountKey: peerIdentity.accountKey.publicKey, peerAccountKey: pinned.accountKey) == .initiator {
            let initiator = try Handshake.Initiator(me: me, peer: pinned, reconnectCounter: nil, prologue: prologue)
            _ = try client.send(on: link, LinkFrame.handshakeFirst(initiator.firstMessage()).encoded, ahead: true)
            return (client, link, try initiator.finish(try linkPayload(client, link, 2)), secret)
        }
        let responder = try Handshake.Responder(me: me, peer: pinned, reconnectCounter: nil, prologue: prologue)
        let (reply, session) = try responder.respond(to: try linkPayload(client, link, 1))
        _ = try client.send(on: link, LinkFrame.handshakeReply(reply).encoded, ahead: true)
        return (client, link, session, secret)
    }
}
