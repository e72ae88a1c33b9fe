import RChatCore
import Synchronization

/// Alerts from a running engine without a view (`rchat sync`, the linger after the view
/// quits), by the same policy as the check: what arrives together goes to `AlertCenter`
/// together — grouped by contact, one summary after five, recorded first so nothing is
/// alerted twice. "Together": arrivals until the engine has had a quarter second without
/// one, at most two seconds from the first.
///
/// Fed on the engine thread: `observe` from `Engine.onEvent`, `turnEnded` from
/// `Engine.onTurnEnd`. A failure to work out the alerts (a setting that does not read)
/// stops the engine it is attached to and is kept for the caller (`error`).
public final class AlertFeed: Sendable {
    public static let quiet = 0.25
    public static let longest = 2.0

    private struct Pending {
        var arrivals: [(conversation: ConversationID, id: MessageID)] = []
        var first: Double?
        var last: Double?
        var unstamped = 0
    }

    private let center: AlertCenter
    private let post: @Sendable (AlertPolicy.Alert) -> Void
    private let pending = Mutex(Pending())
    private let failure = Mutex<EngineError?>(nil)
    private let stopOnFailure = Mutex<(@Sendable () -> Void)?>(nil)

    public init(center: AlertCenter, post: @escaping @Sendable (AlertPolicy.Alert) -> Void) {
        self.center = center
        self.post = post
    }

    /// The first error met while working out alerts, if any.
    public var error: EngineError? { failure.withLock { $0 } }

    public func observe(_ event: ChatEvent) {
        guard case let .newMessage(conversation, id, _) = event else { return }
        pending.withLock {
            $0.arrivals.append((conversation, id))
            $0.unstamped += 1
        }
    }

    /// Posts what arrived together once it has stopped arriving (or has gone on too long).
    public func turnEnded(at now: Double) {
        let due: [(conversation: ConversationID, id: MessageID)] = pending.withLock { p in
            if p.unstamped > 0 {
                p.first = p.first ?? now
                p.last = now
                p.unstamped = 0
            }
            guard let first = p.first, let last = p.last,
                  now - last >= Self.quiet || now - first >= Self.longest else { return [] }
            defer { p = Pending() }
            return p.arrivals
        }
        flush(due)
    }

    /// Posts whatever waits, now (the engine stopped).
    public func finish() {
        flush(pending.withLock { p in defer { p = Pending() }; return p.arrivals })
    }

    private func flush(_ arrivals: [(conversation: ConversationID, id: MessageID)]) {
        guard !arrivals.isEmpty else { return }
        do throws(EngineError) {
            for alert in try center.alerts(for: arrivals) { post(alert) }
        } catch {
            failure.withLock { $0 = $0 ?? error }
            stopOnFailure.withLock { $0 }?()
        }
    }

    /// Feeds on `engine`'s events and turns.
    public func attach(to engine: Engine) {
        engine.onEvent = { [self] event in observe(event) }
        engine.onTurnEnd = { [self] now in turnEnded(at: now) }
        stopOnFailure.withLock { $0 = { [weak engine] in engine?.stop() } }
    }
}
