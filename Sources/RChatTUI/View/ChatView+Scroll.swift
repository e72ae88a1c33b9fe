import RChatCore

/// Scrolling and selection in the open conversation, in lines of the current layout.
extension ChatView {
    /// Items with at least one line on the pane, oldest first.
    func visibleItems() -> [Int] {
        prepare()
        guard let window = state.window, let pane = pane() else { return [] }
        var seen: [Int] = []
        for line in pane.stack(window, anchor: state.anchor) {
            if let i = line.item, seen.last != i { seen.append(i) }
        }
        return seen
    }

    /// Items whose every line is on the pane.
    func wholeItems() -> [Int] {
        guard let window = state.window, let pane = pane() else { return [] }
        let lines = pane.stack(window, anchor: state.anchor)
        let counts = Dictionary(grouping: lines.compactMap(\.item), by: { $0 }).mapValues(\.count)
        return counts.filter { pane.lines(of: $0.key, in: window).count == $0.value }.keys.sorted()
    }

    func moveSelection(_ delta: Int) {
        guard let total = state.window?.total, total > 0 else { return }
        let target: Int
        if let selected = state.selected {
            target = min(max(0, selected + delta), total - 1)
        } else {
            target = visibleItems().last ?? total - 1
        }
        state.selected = target
        reveal(target)
    }

    /// Scrolls just enough for the item to be whole on screen (its top, if it is taller).
    func reveal(_ index: Int) {
        guard var window = state.window else { return }
        if window.item(at: index) == nil {
            index < window.start ? window.loadBack(to: index, model: model) : window.loadForward(to: index, model: model)
            state.window = window
        }
        prepare()
        if wholeItems().contains(index) { return }
        let visible = visibleItems()
        if let bottom = visible.last, index >= bottom {
            state.anchor = index == (state.window?.total ?? 0) - 1 ? nil : Anchor(item: index, linesBelow: 0)
        } else {
            showAtTop(index)
        }
    }

    func showAtTop(_ index: Int) {
        guard var window = state.window, let height = pane()?.height else { return }
        window.loadForward(to: index + height, model: model)
        state.window = window
        state.anchor = pane()?.anchorShowing(top: index, in: window)
    }

    /// PgUp: the bottom line moves `lines` up, stopping with the oldest line at the top.
    func scrollUp(lines: Int) {
        prepare()
        guard let pane = pane(), let start = state.window, !start.items.isEmpty else { return }
        var anchor = state.anchor ?? Anchor(item: start.end - 1, linesBelow: 0)
        var remaining = lines
        while remaining > 0 {
            guard let window = state.window else { return }
            let count = pane.lines(of: anchor.item, in: window).count
            let above = count - 1 - anchor.linesBelow
            if remaining <= above {
                anchor.linesBelow += remaining
                remaining = 0
            } else if anchor.item == 0 {
                anchor.linesBelow = count - 1
                remaining = 0
            } else {
                remaining -= above + 1
                let half = pageSize / 2   // read before the window is borrowed for writing
                state.window?.loadBack(to: anchor.item - 1 - half, model: model)
                anchor = Anchor(item: anchor.item - 1, linesBelow: 0)
            }
        }
        state.anchor = anchor
        prepare()
        // Not past the oldest message: then the oldest line sits at the top.
        if let window = state.window, window.reachesOldest,
           pane.stack(window, anchor: anchor).count < pane.height {
            state.anchor = pane.anchorShowing(top: 0, in: window)
        }
        keepSelectionVisible()
    }

    /// PgDn: the bottom line moves `lines` down, until following the newest again.
    func scrollDown(lines: Int) {
        guard var anchor = state.anchor, let pane = pane() else { return }
        var remaining = lines
        while remaining > 0 {
            if remaining <= anchor.linesBelow {
                anchor.linesBelow -= remaining
                remaining = 0
            } else {
                remaining -= anchor.linesBelow + 1
                guard let total = state.window?.total, anchor.item + 1 < total else {
                    state.anchor = nil
                    keepSelectionVisible()
                    return
                }
                let half = pageSize / 2
                state.window?.loadForward(to: anchor.item + 1 + half, model: model)
                guard let window = state.window else { return }
                let next = anchor.item + 1
                anchor = Anchor(item: next, linesBelow: pane.lines(of: next, in: window).count - 1)
            }
        }
        let atNewest = anchor.linesBelow == 0 && anchor.item == (state.window?.total ?? 0) - 1
        state.anchor = atNewest ? nil : anchor
        keepSelectionVisible()
    }

    /// Messages of the open conversation were deleted: the window drops them, and the
    /// selection, the pane's bottom line and the unread marks stay on what remains.
    func dropRemoved(_ ids: [MessageID]) {
        guard var window = state.window else { return }
        let shift = window.remove(Set(ids), model: model)
        state.window = window
        state.selected = state.selected.flatMap(shift.nearest)
        state.anchor = state.anchor.flatMap(shift.moved)
        state.unread = state.unread.shifted(shift)
        reportedShown.subtract(ids)
    }

    func keepSelectionVisible() {
        guard state.focus == .conversation, let selected = state.selected else { return }
        let visible = visibleItems()
        if !visible.contains(selected) { state.selected = visible.last }
    }

    func goToOldest() {
        guard var window = state.window, window.total > 0 else { return }
        window.jump(to: 0, model: model)
        state.window = window
        showAtTop(0)
        if state.focus == .conversation { state.selected = 0 }
    }

    func goToNewest() {
        guard var window = state.window else { return }
        if !window.reachesNewest { window.jump(to: window.total - 1, model: model) }
        state.window = window
        state.anchor = nil
        if state.focus == .conversation, window.total > 0 { state.selected = window.total - 1 }
    }

    /// `u`: the first message that arrived below while scrolled up, else the first that was
    /// unread when the conversation was opened (the New line).
    func jumpToFirstUnread() {
        guard state.window != nil else { return }
        guard let target = state.unread.firstUnread else {
            say("No unread messages here.")
            return
        }
        if state.window?.item(at: target) == nil { state.window?.jump(to: target, model: model) }
        state.focus = .conversation
        state.selected = target
        showAtTop(target)
    }

    /// The index of the `count`-th incoming message counted back from the newest item of the
    /// open conversation (the oldest item when there are fewer): where `count` unread
    /// messages start. Reads the loaded items, then older pages (larger than the window's:
    /// thousands unread cost tens of reads), without moving the window.
    func incoming(countingBack count: Int) -> Int? {
        guard let window = state.window, count > 0, window.total > 0 else { return nil }
        var seen = 0
        var page: (start: Int, items: [ConversationItem]) = (0, [])
        var index = window.total - 1
        while index >= 0 {
            if window.item(at: index) == nil, index < page.start || index >= page.start + page.items.count {
                let items = model.page(of: window.conversation, before: window.total - 1 - index,
                                       limit: min(max(pageSize, 256), index + 1))
                guard !items.isEmpty else { break }
                page = (index + 1 - items.count, items)
            }
            let item = window.item(at: index) ?? page.items[index - page.start]
            if item.message?.direction == .incoming {
                seen += 1
                if seen == count { return index }
            }
            index -= 1
        }
        return max(0, index + 1)
    }
}
