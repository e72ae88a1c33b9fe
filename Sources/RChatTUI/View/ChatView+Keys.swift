import RChatCore

extension ChatView {
    /// One key press. Any key dismisses the banner and the last notice.
    public func handle(_ key: Key) {
        thread.check()
        // LF is Enter too: keys typed before the terminal was set up arrive with CR turned
        // into LF, and some terminals send it. Only a paste tells them apart (BracketedPaste).
        let key = key == .control("j") ? Key.enter : key
        state.now = now()
        switch key {
        case .resize: return
        // Not a key the user pressed: the banner and the notice stay. Focus back: the next
        // frame reports what is on screen as read.
        case .focusIn: state.terminalFocus = .focused; return
        case .focusOut: state.terminalFocus = .lost; return
        case .mouse(let event): mouse(event); return
        default: break
        }
        let context = KeyMap.Context(focus: state.focus, composerEmpty: state.composer.isEmpty, selection: state.selected != nil,
                                     composerCommand: state.composer.text.hasPrefix("/"), onRequest: requestUnderKeys != nil)
        // Esc and a key pressed quickly arrive in one read, as Alt with that key: where Alt
        // gives it no meaning (and in an overlay), they are the two keys the user pressed. A
        // prompt decides for itself (Alt edits its path).
        if case .alt(let inner) = key, state.overlay != nil || state.prompt == nil && KeyMap.command(for: key, in: context) == .none {
            handle(.escape)
            handle(inner)
            return
        }
        state.banner = nil
        state.notice = state.notice?.after(.key)
        if state.overlay != nil {
            overlayKey(key)
            return
        }
        if state.prompt != nil {
            promptKey(key)
            return
        }
        let before = state.openConversation
        let textBefore = state.composer.text
        var edited = false
        if !composerModeKey(key) {
            let command = KeyMap.command(for: key, in: context)
            perform(command)
            edited = command.mayEditComposer
        }
        // Typing and editing (and a Ctrl-R match taken, a completion): written a moment
        // later (leaving and sending write at once).
        if edited || state.composer.text != textBefore, let open = state.openConversation, open == before {
            noteDraftChanged(open, now: false)
        }
    }

    func perform(_ command: Command) {
        switch command {
        case .quit: quit()
        case .redraw: wantsFullRedraw = true
        case .suspend: suspendRequested = true
        case .focusNext: focus(state.focus.next)
        case .focusPrevious: focus(state.focus.previous)
        case .up: state.focus == .list ? moveListCursor(-1) : moveSelection(-1)
        case .down: state.focus == .list ? moveListCursor(1) : moveSelection(1)
        case .pageUp: scrollUp(lines: max(1, Layout(state).bodyHeight - 1))
        case .pageDown: scrollDown(lines: max(1, Layout(state).bodyHeight - 1))
        case .oldest: goToOldest()
        case .newest: goToNewest()
        case .open:
            guard state.conversations.indices.contains(state.listCursor) else { return }
            switchTo(state.conversations[state.listCursor].id)
            state.focus = .composer
        case .nextConversation: switchConversation(1)
        case .previousConversation: switchConversation(-1)
        case .conversationNumber(let n): openNumber(n)
        case .nextUnreadConversation: openNextUnread()
        case .firstUnread: jumpToFirstUnread()
        case .resend: resendSelected()
        case .details: showDetails()
        case .reply: startReply()
        case .editMessage: startEdit()
        case .deleteMessage: deleteSelected()
        case .reactMessage: reactSelected(nil)
        case .openAttachment: openAttachment()
        case .saveAttachment: askWhereToSave()
        case .playAttachment: playAttachment()
        case .help: showHelp()
        case .leave:
            // Esc in the composer, nothing typed: the reply being written is let go.
            if state.focus == .composer, state.composer.isEmpty, let reply = state.openReply {
                state.replyingTo = nil
                return say(reply.purpose == .edit ? "Not editing." : "Not replying.")
            }
            // Editing, with its text still there: Esc lets the edit go and the text with it.
            if state.focus == .composer, let reply = state.openReply, reply.purpose == .edit {
                state.replyingTo = nil
                _ = state.composer.take()
                return say("Not editing.")
            }
            state.selected = nil
            state.focus = .composer
        case .edit(let edit): state.composer.apply(edit)
        case .type(let c):
            state.focus = .composer
            state.composer.apply(.insert(c))
        case .submit: submit()
        case .complete: complete()
        case .searchHistory: state.composer.search(.older)
        case .ctrlX: state.composer.beginCtrlX()
        case .acceptRequest: acceptRequest()
        case .declineRequest: askToDecline()
        case .blockRequest: blockRequest()
        case .none: break
        }
    }

    func focus(_ focus: Focus) {
        if focus == .conversation && state.window == nil {
            // Nothing to select: skip to where Tab would go next.
            state.focus = focus == state.focus.next ? focus.next : focus.previous
            return
        }
        state.focus = focus
        if focus == .list, let open = state.openConversation,
           let i = state.conversations.firstIndex(where: { $0.id == open }) {
            state.listCursor = i
        }
        guard focus == .conversation else { return }
        // `Tab, r` resends what may not have arrived, never what a selection left from
        // before points at. With nothing to resend nothing is selected, so the letters
        // typed next go to the composer (Up selects).
        if let newest = state.window?.newestOfferingResend {
            state.selected = newest
            reveal(newest)
        } else {
            state.selected = nil
        }
    }

    func moveListCursor(_ delta: Int) {
        guard !state.conversations.isEmpty else { return }
        state.listCursor = min(max(0, state.listCursor + delta), state.conversations.count - 1)
    }

    func switchConversation(_ delta: Int) {
        let ids = state.conversations.map(\.id)
        guard !ids.isEmpty else { return }
        var current = delta > 0 ? -1 : ids.count
        if let open = state.openConversation, let i = ids.firstIndex(of: open) { current = i }
        let next = (current + delta + ids.count) % ids.count
        switchTo(ids[next])
    }

    /// Opens another conversation from anywhere; the focus leaves a selection for the composer.
    /// The open one stays as it is (its New line, scroll position and draft).
    func switchTo(_ conversation: ConversationID) {
        if conversation != state.openConversation { open(conversation) }
        if state.focus == .conversation { state.selected = nil; state.focus = .composer }
    }

    /// Alt-1…Alt-9: the n-th conversation of the list.
    func openNumber(_ n: Int) {
        guard state.conversations.indices.contains(n - 1) else {
            return say("The list has \(state.conversations.count) conversation\(state.conversations.count == 1 ? "" : "s").")
        }
        switchTo(state.conversations[n - 1].id)
        state.focus = .composer
    }

    /// Alt-A: the next conversation in the list, after the open one, with unread messages
    /// that count (muted ones only when no other has any).
    func openNextUnread() {
        let list = state.conversations
        guard !list.isEmpty else { return say("No other conversation has unread messages.") }
        let open = state.openConversation
        let from = open.flatMap { open in list.firstIndex { $0.id == open } } ?? -1
        let after = (1...max(1, list.count)).map { list[(from + $0 + list.count) % list.count] }
            .filter { $0.id != open && $0.unread > 0 && $0.state != .blocked }
        guard let next = after.first(where: \.countsAsUnread) ?? after.first else {
            return say("No other conversation has unread messages.")
        }
        switchTo(next.id)
        state.focus = .composer
    }

    func overlayKey(_ key: Key) {
        guard var overlay = state.overlay else { return }
        if overlay.kind == .alertPermission { return alertPermissionKey(key) }
        if overlay.kind == .confirmQuit {
            state.overlay = nil
            if key == .character("y") || key == .character("Y") {
                quitRequested = true
            } else {
                say("Not quitting.")
            }
            return
        }
        if case .search = overlay.kind { return searchKey(key) }
        if requestOverlayKey(key) { return }
        if case .confirmDelete(let conversation) = overlay.kind {
            state.overlay = nil
            if key == .character("y") || key == .character("Y") {
                deleteConversation(conversation)
            } else {
                say("Kept \(state.summary(conversation)?.name ?? "the conversation").")
            }
            return
        }
        let page = max(1, state.rows - 6)
        switch key {
        case .control("c"), .control("q"): quit()
        case .up, .character("k"): overlay.scroll = max(0, overlay.scroll - 1)
        case .down, .character("j"): overlay.scroll += 1
        case .pageUp: overlay.scroll = max(0, overlay.scroll - page)
        case .pageDown: overlay.scroll += page
        default:
            state.overlay = nil
            return
        }
        // Never past the end: keep the last screenful in view.
        let inner = max(10, state.columns - 6)
        let count = OverlayBox.wrappedLines(overlay, width: inner, screenColumns: state.columns).count
        overlay.scroll = min(overlay.scroll, max(0, count - max(1, state.rows - 4)))
        state.overlay = overlay
    }
}
