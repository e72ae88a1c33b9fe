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
