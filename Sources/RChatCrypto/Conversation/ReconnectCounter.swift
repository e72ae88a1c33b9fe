/// The per-conversation reconnect counter that rendezvous codes use (kept in
/// `SavedSessionState`), and the rule by which it moves on.
///
/// Rule:
/// 1. A new conversation starts at 0 on both sides.
/// 2. Each side presents the codes of its counter c only (`RendezvousCode.Presentation`).
/// 3. Each handshake payload carries the sender's counter (or none, when it started over).
/// 4. After a session is set up, both sides store `next(mine:peers:)` = the greatest known
///    counter + 1, committed with the session's keys.
///
/// Why: the next counter is greater than every counter either side presented before, so no
/// code of one session's reconnect is presented again at the next one, and a relay cannot
/// link two reconnects of a pair by a shared code. Both sides compute the same value, so they
/// meet on it next time. A side that crashed before saving keeps its old counter, one the
/// other no longer presents: the two meet on today's recovery code, which both add once their
/// counter codes found nobody (`RendezvousCode.Presentation.counterAndRecovery`), and move on
/// past both counters.
public enum ReconnectCounter {
    public static let initial: UInt64 = 0

    /// The counter both sides store after a session. `nil` is a side that started over.
    public static func next(mine: UInt64?, peers: UInt64?) -> UInt64 {
        switch (mine, peers) {
        case let (m?, p?): return max(m, p) &+ 1
        case let (m?, nil): return m &+ 1
        case let (nil, p?): return p &+ 1
        case (nil, nil): return initial &+ 1
        }
    }
}
