/// The Delivered receipt frames of one session that the relay has not settled: sent in
/// order, each covering the incoming messages up to a position. The store's mark may move
/// only over frames the relay took with nothing earlier still open, so a crash at any moment
/// leaves every receipt the relay did not take still owed (a few may go twice: a receipt
/// raises a status that is already there, which changes nothing).
struct DeliveredReceiptsInFlight {
    private var frames: [(seq: UInt64, through: Int64, taken: Bool)] = []
    /// How far this session's frames reach; nil: start from the store's mark.
    private(set) var sentThrough: Int64?

    var isEmpty: Bool { frames.isEmpty }

    /// A frame went out under relay sequence `seq`, covering messages up to `through`.
    mutating func sent(seq: UInt64, through: Int64) {
        frames.append((seq, through, false))
        sentThrough = max(sentThrough ?? through, through)
    }

    /// The relay took frame `seq`. Returns where the store's mark may move now, if anywhere.
    mutating func taken(seq: UInt64) -> Int64? {
        guard let i = frames.firstIndex(where: { $0.seq == seq }) else { return nil }
        frames[i].taken = true
        var mark: Int64?
        while let first = frames.first, first.taken {
            mark = first.through
            frames.removeFirst()
        }
        return mark
    }

    /// The relay refused frame `seq` (or the session ended): whatever is not settled goes
    /// again, from the store's mark. Answers to the forgotten frames are then ignored.
    mutating func forgetAll() {
        frames.removeAll()
        sentThrough = nil
    }
}
