import RChatCore

/// The loaded part of the open conversation: a contiguous run of items fetched page by
/// page, never the whole history. Items are addressed by absolute index (0 = oldest),
/// which stays put when new items arrive at the end.
public struct ConversationWindow: Sendable {
    public let conversation: ConversationID
    /// Items in the conversation, as last counted.
    public private(set) var total: Int
    /// Absolute index of `items[0]`.
    public private(set) var start: Int
    public private(set) var items: [ConversationItem]
    /// How many items one fetch asks for.
    public let pageSize: Int

    /// Opens at the newest page.
    init(conversation: ConversationID, model: ChatModel, pageSize: Int) {
        self.conversation = conversation
        self.pageSize = max(1, pageSize)
        total = model.itemCount(of: conversation)
        items = total == 0 ? [] : model.page(of: conversation, before: nil, limit: min(self.pageSize, total))
        start = total - items.count
    }

    public var end: Int { start + items.count }
    public var reachesOldest: Bool { start == 0 }
    public var reachesNewest: Bool { end >= total }

    public func item(at index: Int) -> ConversationItem? {
        index >= start && index < end ? items[index - start] : nil
    }

    /// Loads older pages until `index` is loaded (or the oldest is).
    mutating func loadBack(to index: Int, model: ChatModel) {
        while start > max(0, index) {
            let want = min(pageSize, start)
            let page = model.page(of: conversation, before: total - start, limit: want)
            if page.isEmpty { break }
            items.insert(contentsOf: page, at: 0)
            start -= page.count
        }
        trim(keepingNear: index)
    }

    /// Loads newer pages until `index` is loaded (or the newest is).
    mutating func loadForward(to index: Int, model: ChatModel) {
        while end <= min(index, total - 1) {
            let want = min(pageSize, total - end)
            let before = total - end - want
            let page = model.page(of: conversation, before: before, limit: want)
            if page.isEmpty { break }
            items.append(contentsOf: page)
        }
        trim(keepingNear: index)
    }

    /// Jumps to a distant place (Home, End, first unread): one page there, not everything in
    /// between.
    mutating func jump(to index: Int, model: ChatModel) {
        total = model.itemCount(of: conversation)
        let index = min(max(0, index), max(0, total - 1))
        let pageEnd = min(total, index + pageSize / 2 + 1)
        let pageStart = max(0, pageEnd - pageSize)
        items = pageEnd > pageStart
            ? model.page(of: conversation, before: total - pageEnd, limit: pageEnd - pageStart) : []
        start = pageEnd - items.count
    }

    /// Picks up items added at the end since the last count. Returns how many arrived.
    @discardableResult
    mutating func syncTail(model: ChatModel) -> Int {
        let newTotal = model.itemCount(of: conversation)
        guard newTotal != total else { return 0 }
        if newTotal < total {   // something was removed: start again at the newest
            self = ConversationWindow(conversation: conversation, model: model, pageSize: pageSize)
            return 0
        }
        let added = newTotal - total
        let wasAtNewest = reachesNewest
        total = newTotal
        if wasAtNewest {
            // No trimming here: the user may be looking at the older end of the window.
            items.append(contentsOf: model.page(of: conversation, before: nil, limit: added))
        }
        return added
    }

    /// Items were deleted from the conversation (`ids`; the model no longer has them): drops
    /// the loaded ones and moves the window by the number deleted above it, found by where
    /// its first remaining item is now, so the same items stay loaded under their new
    /// indices. Returns where every old index went, for the selection, anchor and marks.
    /// When none of the loaded items remains, the window goes where the first of them was by
    /// time: before the first remaining item that happened at its time or later.
    mutating func remove(_ ids: Set<MessageID>, model: ChatModel) -> IndexShift {
        let old = (start: start, end: end, total: total)
        let wasAtNewest = reachesNewest
        let keptOffsets = items.indices.filter { items[$0].message.map { !ids.contains($0.id) } ?? true }
        let newTotal = model.itemCount(of: conversation)
        let outside = max(0, old.total - newTotal - (items.count - keptOffsets.count))
        var newStart = min(max(0, old.start - outside), newTotal)
        if let first = keptOffsets.first,
           let found = Self.locate(items[first].key, atOrBefore: min(old.start, newTotal - 1), in: conversation,
                                   total: newTotal, model: model, pageSize: pageSize) {
            newStart = found
        } else if let first = items.first {
            newStart = Self.firstIndex(notBefore: first.at, in: conversation, total: newTotal, model: model)
        }
        total = newTotal
        let count = wasAtNewest ? newTotal - newStart : min(keptOffsets.count, newTotal - newStart)
        items = count > 0 ? model.page(of: conversation, before: newTotal - newStart - count, limit: count) : []
        start = newStart
        return IndexShift(oldStart: old.start, oldEnd: old.end, oldTotal: old.total,
                          kept: keptOffsets.map { old.start + $0 }, newStart: newStart, newTotal: newTotal)
    }

    /// The first index whose item happened at `at` or later (items are stored in the order
    /// they happened), by bisection: one-item reads, about log2(total) of them.
    private static func firstIndex(notBefore at: Int64, in conversation: ConversationID, total: Int, model: ChatModel) -> Int {
        var low = 0, high = total
        while low < high {
            let middle = (low + high) / 2
            guard let item = model.page(of: conversation, before: total - 1 - middle, limit: 1).first else { return low }
            if item.at < at { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the item `key` names, searched from `index` towards the oldest a page at
    /// a time (deletions only move items towards the oldest); nil when it is not there.
    private static func locate(_ key: ItemKey, atOrBefore index: Int, in conversation: ConversationID, total: Int,
                               model: ChatModel, pageSize: Int) -> Int? {
        let step = max(pageSize, 256)
        var top = index
        while top >= 0 {
            let page = model.page(of: conversation, before: total - 1 - top, limit: min(step, top + 1))
            guard !page.isEmpty else { return nil }
            if let at = page.lastIndex(where: { $0.key == key }) { return top + 1 - page.count + at }
            top -= page.count
        }
        return nil
    }

    /// Fetches the loaded range again (a row arrived that changed markers on earlier ones).
    mutating func reload(model: ChatModel) {
        let wasAtNewest = reachesNewest
        let oldStart = start
        total = model.itemCount(of: conversation)
        let newEnd = wasAtNewest ? total : min(end, total)
        let newStart = min(oldStart, newEnd)
        items = newEnd > newStart ? model.page(of: conversation, before: total - newEnd, limit: newEnd - newStart) : []
        start = newEnd - items.count
    }

    /// Absolute index of the newest loaded item that offers Resend.
    var newestOfferingResend: Int? {
        items.lastIndex(where: \.offersResend).map { start + $0 }
    }

    /// Whether a loaded row offers Resend for `id`: a change of its status may withdraw it.
    func rowOffersResend(for id: MessageID) -> Bool {
        items.contains { if case .row(let r) = $0 { r.action == .resend && r.messageIDs.contains(id) } else { false } }
    }

    /// A status changed: update the item in place if it is loaded.
    mutating func update(_ id: MessageID, status: MessageStatus) -> Bool {
        guard let i = items.firstIndex(where: { if case .message(let m) = $0 { m.id == id } else { false } }),
              case .message(var m) = items[i] else { return false }
        m.status = status
        // Taken by the relay (or given up): it no longer waits for anything.
        if status != .sending { m.waiting = nil }
        items[i] = .message(m)
        return true
    }

    /// Keeps memory bounded while scrolling a long history: at most four pages, around
    /// the place being looked at.
    private mutating func trim(keepingNear index: Int) {
        let cap = pageSize * 4
        guard items.count > cap else { return }
        let lo = min(max(start, index - cap / 2), end - cap)
        let drop = lo - start
        if drop > 0 { items.removeFirst(drop); start += drop }
        if items.count > cap { items.removeLast(items.count - cap) }
    }
}

/// Where the absolute indices of a conversation went when some of its items were deleted.
/// Exact for the window's loaded items; outside it, an index above keeps its distance from
/// the window's start and one below its distance from the newest item (what lies there
/// arrived unseen, and an unseen message's clock has not started).
public struct IndexShift: Equatable, Sendable {
    let oldStart: Int
    let oldEnd: Int
    let oldTotal: Int
    /// The old indices of the loaded items that remain, ascending.
    let kept: [Int]
    let newStart: Int
    let newTotal: Int

    /// Whether the item at old index `index` is known to be gone (a loaded one that was deleted).
    func removed(_ index: Int) -> Bool {
        index >= oldStart && index < oldEnd && !kept.contains(index)
    }

    /// Where the item at old index `index` is now; for a deleted one, where the next
    /// remaining item is, which took its place (`newTotal` when none follows).
    func place(of index: Int) -> Int {
        if index < oldStart { return max(0, index - (oldStart - newStart)) }
        if index < oldEnd { return newStart + kept.prefix { $0 < index }.count }
        return min(newTotal, max(newStart + kept.count, newTotal - (oldTotal - index)))
    }

    /// The remaining item nearest to old index `index`: itself, else the one that took its
    /// place, else the newest; nil when nothing remains.
    func nearest(to index: Int) -> Int? {
        newTotal == 0 ? nil : min(place(of: index), newTotal - 1)
    }

    /// Where the pane's bottom line is now: the same line of the same item; for a deleted
    /// item, the bottom of the remaining one above it, so what was above stays in view. Nil
    /// (follow the newest) when that is the newest item's bottom line, or nothing remains.
    func moved(_ anchor: Anchor) -> Anchor? {
        guard newTotal > 0 else { return nil }
        let next = place(of: anchor.item)
        let moved = removed(anchor.item) ? Anchor(item: max(0, min(next - 1, newTotal - 1)), linesBelow: 0)
                                         : Anchor(item: min(next, newTotal - 1), linesBelow: anchor.linesBelow)
        return moved.item == newTotal - 1 && moved.linesBelow == 0 ? nil : moved
    }
}
