import RChatCore
import RChatNet

/// The loop the relay's logic runs on: the epoll `EventLoop` of `rchat-relay`, or the
/// simulation's virtual one (docs/ARCHITECTURE.md, "Time and transport").
public protocol RelayLoop: AnyObject {
    /// Seconds on the loop's monotonic clock, read once per iteration.
    var now: Double { get }
    @discardableResult
    func schedule(after seconds: Double, repeating: Bool, _ action: @escaping () -> Void) -> Int
    /// Runs `hook` at the end of every iteration, before any queued byte leaves: what the
    /// relay acknowledges in an iteration is committed first.
    func addBeforeFlush(_ hook: @escaping () -> Void)
}

extension EventLoop: RelayLoop {
    public func addBeforeFlush(_ hook: @escaping () -> Void) { beforeFlush.append(hook) }
}

/// One client connection as the relay's logic uses it: frames out (sealed by the session),
/// and what the relay needs to know of the stream.
public protocol RelayConnectionPort: AnyObject {
    /// Queues one frame body; it leaves at the end of the loop's iteration.
    func send(_ body: [UInt8])
    /// Writes what is queued now.
    func flush()
    func close()
    /// Closes without writing what is queued (it reports work that did not become durable).
    func abandon()
    var isClosed: Bool { get }
    /// Bytes queued and not yet taken by the peer.
    var outboundBytes: Int { get }
    /// Loop time the connection was accepted.
    var openedAt: Double { get }
    /// Loop time the frame being received began, if one is half-received.
    var partialFrameSince: Double? { get }
}

extension StreamConnection: RelayConnectionPort {}

/// What a connection that is not a socket (the simulation's) tells the relay: each whole
/// frame received, in order, then that it closed.
public protocol RelayConnectionReceiver: AnyObject {
    func received(_ frame: [UInt8])
    func connectionClosed()
}
