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
    public typealias Arrival = (conversation: ConversationID, id: MessageID)

    private struct Pending {
        var burst = AlertBurst<Arrival>()
        /// Observed since the engine's last turn ended: stamped with that turn's end.
        var unstamped: [Arrival] = []
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
        guard case let .newMessage(conversation, id, _, _, _) = event else { return }
        pending.withLock { $0.unstamped.append((conversation, id)) }
    }

    /// Posts what arrived together once it has stopped arriving (or has gone on too long).
    public func turnEnded(at now: Double) {
        let due = pending.withLock { p in
            p.burst.add(p.unstamped, at: now)
            p.unstamped = []
            return p.burst.takeDue(at: now)
        }
        flush(due)
    }

    /// When what waits is due if nothing more arrives (the engine's monotonic time; infinity:
    /// nothing waits): the engine turns then, so a burst is alerted a quarter second after it
    /// ends.
    public var nextDue: Double { pending.withLock { $0.unstamped.isEmpty ? $0.burst.due ?? .infinity : 0 } }

    /// Posts whatever waits, now (the engine stopped).
    public func finish() {
        flush(pending.withLock { p in defer { p = Pending() }; return p.burst.takeAll() + p.unstamped })
    }

    private func flush(_ arrivals: [Arrival]) {
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
        engine.onTurnEndDeadline = { [self] in nextDue }
        stopOnFailure.withLock { $0 = { [weak engine] in engine?.stop() } }
    }
}
