/// The requests of one relay connection waiting for the relay's answer, each under the
/// sequence number its frame went with (docs/ARCHITECTURE.md, "Answers"). A completion is
/// registered when the frame is sent and taken by the answer (`sent` or `refused`) that
/// completes it; an answer for a number that waits for nothing — never sent on this
/// connection, or answered already — finds nothing.
struct RelayRequests<Completion> {
    private var waiting: [UInt64: Completion] = [:]

    /// The frame sent under `seq` waits for its answer.
    mutating func register(_ seq: UInt64, _ completion: Completion) {
        waiting[seq] = completion
    }

    /// The completion that `seq`'s answer completes, taken; nil when none waits.
    mutating func complete(_ seq: UInt64) -> Completion? {
        waiting.removeValue(forKey: seq)
    }

    /// The connection ended: no answer comes for anything it sent.
    mutating func removeAll() { waiting.removeAll() }

    var count: Int { waiting.count }
}
