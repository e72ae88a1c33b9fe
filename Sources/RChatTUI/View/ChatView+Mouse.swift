import RChatCore

/// The mouse (`mouse on`, SGR reports): the wheel scrolls the pane under the pointer, a
/// left click opens a conversation in the list, selects a message or row in the
/// conversation, or goes to the composer. An overlay or a prompt takes keys only.
extension ChatView {
    /// Lines the wheel moves the conversation per notch.
    static let wheelLines = 3

    func mouse(_ event: MouseEvent) {
        guard state.overlay == nil, state.prompt == nil else { return }
        prepare()
        let layout = Layout(state)
        let inBody = event.row >= layout.bodyTop && event.row < layout.bodyTop + layout.bodyHeight
        let inList = inBody && layout.listWidth > 0 && event.column < layout.listWidth
        let inPane = inBody && event.column >= layout.paneLeft
        switch event.action {
        case .wheelUp, .wheelDown:
            let up = event.action == .wheelUp
            if inList {
                if state.focus != .list { focus(.list) }
                moveListCursor(up ? -1 : 1)
            } else if inPane {
                up ? scrollUp(lines: Self.wheelLines) : scrollDown(lines: Self.wheelLines)
            }
        case .press(button: 0):
            state.banner = nil
            state.notice = nil
            if inList {
                guard let index = ListPane.entry(atRow: event.row, state, layout) else { return }
                switchTo(state.conversations[index].id)
                state.focus = .composer
            } else if inPane {
                guard let item = item(atRow: event.row, layout) else { return }
                state.focus = .conversation
                state.selected = item
                reveal(item)
            } else if event.row >= layout.composerRow {
                state.focus = .composer
            }
        case .press, .release, .other:
            return
        }
    }

    /// The conversation item drawn on screen row `row`, if any.
    func item(atRow row: Int, _ layout: Layout) -> Int? {
        guard let window = state.window, let pane = pane() else { return nil }
        let lines = pane.stack(window, anchor: state.anchor)
        let top = layout.bodyTop + layout.bodyHeight - lines.count
        guard row >= top, row - top < lines.count else { return nil }
        return lines[row - top].item
    }

    /// Mouse reporting as the settings say, asked of the terminal when it changes.
    func applyMouseSetting() {
        guard settings.mouse != mouseReporting else { return }
        mouseReporting = settings.mouse
        request(.mouseReporting(settings.mouse))
    }
}
