import Foundation
import RChatCore
import RChatRelayClient
import RChatStore

/// The engine's view of one relay it uses: the live client (if any), what it has sent that
/// the relay has not answered yet, and when to try again after a failure.
final class RelayConnection {
    let address: RelayAddress
    var client: (any RelayLink)?
    /// Bumped at every attempt, so events from an earlier client are recognised and dropped.
    var generation: UInt64 = 0
    var connecting = false
    var failures = 0
    /// When to try again, on the engine's monotonic clock (`Engine.ticks`), like `keepaliveAt`.
    var retryAt = -Double.infinity
    /// What it sent that waits for the relay's answer, by sequence number.
    var requests = RelayRequests<RelayCompletion>()
    /// An acknowledgement on this connection went overdue and none has come since: the view
    /// shows the relay as stalled, not online.
    var acknowledgementsOverdue = false
    /// Events that arrived before the attempt's `.connected` was handled.
    var early: [RelayEvent] = []
    /// When to ping next (`Engine.keepaliveSeconds` after the last ping): a relay closes a
    /// connection that sends nothing and has no code waiting and no link for its idle
    /// timeout (300 s by default, five pings' time).
    var keepaliveAt = Double.infinity
    /// When to present the codes of conversations without a link again: a relay forgets a
    /// code after its pairing timeout (300 s by default), and a day's codes change at
    /// midnight, so a contact who comes later would otherwise find none.
    var presentAgainAt = Double.infinity
    /// When to send the next cover frame to the own mailbox (infinity: none scheduled).
    var coverAt = Double.infinity

    init(address: RelayAddress) { self.address = address }

    var isOnline: Bool { client != nil }

    /// `/reconnect`: the next attempt is now, and the backoff starts again from 1 s.
    func retryNow() {
        failures = 0
        retryAt = -Double.infinity
    }

    /// 1, 2, 4 … 30 seconds between attempts; never again under a policy that does not
    /// reconnect (`rchat check` tries each relay once).
    func scheduleRetry(now: Double, reconnects: Bool) {
        failures += 1
        retryAt = reconnects ? now + min(30, pow(2, Double(min(failures - 1, 5)))) : .infinity
    }

    /// Whole seconds until the next attempt (for the view's "offline, retrying in N s").
    func retryIn(now: Double) -> Int { retryAt.isFinite ? Int((retryAt - now).rounded(.up)) : 0 }
}
