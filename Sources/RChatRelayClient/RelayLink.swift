import Foundation
import RChatCore
import RChatCrypto
import RChatWire

/// What the engine asks of one connection to a relay. `RelayClient` is the real one (a
/// socket, a reader and a writer thread); the simulation has an in-memory one that speaks the
/// same frames to the relay's logic on virtual time (docs/ARCHITECTURE.md, "Time and
/// transport"). Every method may be called from the engine thread only.
public protocol RelayLink: AnyObject, Sendable {
    /// The mailbox the connection proved.
    var mailbox: MailboxID { get }
    func present(_ codes: [[UInt8]], flush: Bool) throws(RelayClientError)
    @discardableResult
    func registerInvites(salts: [[UInt8]], flush: Bool) throws(RelayClientError) -> [InviteToken]
    func moveMailbox(from old: SigningKey, flush: Bool) throws(RelayClientError)
    @discardableResult
    func send(on link: LinkID, _ payload: [UInt8], ahead: Bool, flush: Bool) throws(RelayClientError) -> UInt64
    @discardableResult
    func sendRequest(to token: InviteToken, _ payload: [UInt8], flush: Bool) throws(RelayClientError) -> UInt64
    func acknowledge(_ ids: [HeldItemID], flush: Bool) throws(RelayClientError)
    func ping(_ value: UInt64) throws(RelayClientError)
    /// Gives a link up: the relay tells the peer it is gone.
    func leave(_ link: LinkID) throws(RelayClientError)
    func flush() throws(RelayClientError)
    /// Whether a bulk sender may queue more now (see `RelayClient.hasRoom`).
    func hasRoom() -> Bool
    /// Ends the connection; a `.closed(nil)` event follows.
    func close()
}

extension RelayLink {
    public func present(_ codes: [[UInt8]]) throws(RelayClientError) { try present(codes, flush: true) }
    public func moveMailbox(from old: SigningKey) throws(RelayClientError) { try moveMailbox(from: old, flush: true) }
    @discardableResult
    public func registerInvites(salts: [[UInt8]]) throws(RelayClientError) -> [InviteToken] {
        try registerInvites(salts: salts, flush: true)
    }
    public func ping() throws(RelayClientError) { try ping(0) }
}

extension RelayClient: RelayLink {}

/// How the engine makes connections: `ThreadedRelayDialer` connects for real; the simulation
/// dials its in-memory network.
public protocol RelayDialer: Sendable {
    /// Starts one attempt. `done` is called once, from any thread, with the link or why not;
    /// after a link, `events` gets its events in order (the last one `.closed`) and
    /// `writable` follows a `hasRoom()` that said no, once there is room again.
    func dial(_ address: RelayAddress, mailboxKey: SigningKey, stallTimeout: Double,
              events: @escaping @Sendable (RelayEvent) -> Void, writable: @escaping @Sendable () -> Void,
              done: @escaping @Sendable (Result<any RelayLink, RelayClientError>) -> Void)
}

/// Connects over TCP on a thread of its own per attempt (the connection and its handshake
/// block), with a 5 s handshake timeout.
public struct ThreadedRelayDialer: RelayDialer {
    public init() {}

    public func dial(_ address: RelayAddress, mailboxKey: SigningKey, stallTimeout: Double,
                     events: @escaping @Sendable (RelayEvent) -> Void, writable: @escaping @Sendable () -> Void,
                     done: @escaping @Sendable (Result<any RelayLink, RelayClientError>) -> Void) {
        let thread = Thread {
            do throws(RelayClientError) {
                let client = try RelayClient.connect(to: address, mailboxKey: mailboxKey, timeout: 5, stallTimeout: stallTimeout,
                                                     eventHandler: events, whenWritable: writable)
                done(.success(client))
            } catch {
                done(.failure(error))
            }
        }
        thread.name = "rchat-connect"
        thread.start()
    }
}
