/// The per-conversation reconnect counter that rendezvous codes use (kept in
/// `SavedSessionState`), and the rule by which two sides keep theirs within one of each other.
///
/// Rule:
/// 1. A new conversation starts at 0 on both sides.
/// 2. Each side presents codes for its counter c and c+1 (`RendezvousCode.presented`).
/// 3. Each handshake payload carries the sender's counter (or none, when it started over).
/// 4. After a session is set up, both sides store `next(mine:peers:)` = min of the known
///    counters + 1, committed with the session's keys.
///
/// Why it holds: if the stored counters are within one (m and m+1), the next value is m+1,
/// and each side ends with either its old value (it crashed before saving) or m+1 — still
/// within {m, m+1}. Two counters one apart always share a presented code (the higher one),
/// so the sides always meet. Using max instead of min would break this: the lower side
/// failing to save would leave the counters two apart.
public enum ReconnectCounter {
    public static let initial: UInt64 = 0

    /// The counter both sides store after a session. `nil` is a side that started over.
    public static func next(mine: UInt64?, peers: UInt64?) -> UInt64 {
        switch (mine, peers) {
        case let (m?, p?): return min(m, p) &+ 1
        case let (m?, nil): return m &+ 1
        case let (nil, p?): return p &+ 1
        case (nil, nil): return initial &+ 1
        }
    }
}
