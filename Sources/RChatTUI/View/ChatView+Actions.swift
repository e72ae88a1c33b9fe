import RChatCore

/// What the user asks for: sending, Resend, details, help, and the slash commands.
extension ChatView {
    func submit() {
        let line = state.composer.text
        guard !line.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return }
        if line.hasPrefix("/") && !line.hasPrefix("//") {
            _ = state.composer.take()
            runCommand(line)
            return
        }
        guard let conversation = state.openConversation else {
            say("Open a conversation first: Tab to the list, then Enter.", error: true)
            return
        }
        // "//text" sends "/text": a message may start with a slash. Line breaks at the end
        // (a paste's last one, a line left empty) carry nothing and are not sent.
        var text = line.hasPrefix("//") ? String(line.dropFirst()) : line
        while text.last?.isNewline == true { text.removeLast() }
        _ = state.composer.take()
        let reply = state.openReply
        do {
            if let reply, reply.purpose == .edit {
                try model.act(in: conversation, .edit(reply.target, text: text))
                state.replyingTo = nil
                noteDraftChanged(conversation, now: true)
                return say("Edited.")
            }
            try model.send(to: conversation, content: reply.map { .reply(Reply(target: $0.target, text: text)) } ?? .text(text))
            if reply != nil { state.replyingTo = nil }
        } catch {
            state.composer.restore(line)   // nothing the user wrote is lost
            say(error.description, error: true)
            return
        }
        noteDraftChanged(conversation, now: true)   // sent: a restart never brings it back as a draft
        goToNewest()
        state.window?.syncTail(model: model)
    }

    func runCommand(_ line: String) {
        // Any whitespace separates words: a pasted code may carry line breaks.
        let words = line.dropFirst().split(whereSeparator: \.isWhitespace).map(String.init)
        guard let name = words.first?.lowercased() else { return }
        let args = Array(words.dropFirst())
        if let demo = options.demoCommands.first(where: { $0.name.lowercased() == name }) {
            if let reply = demo.reply(args) { say(reply.text, lasts: reply.task.map(Notice.Lasts.demo) ?? .untilKey) }
            return
        }
        switch name {
        case "add":
            // A pasted code may carry spaces where a line was broken: all of it is the code.
            guard !args.isEmpty else { return say("Usage: /add CODE (the code your contact gave you)", error: true) }
            // In a group, contacts' names (not a code) join it.
            if let open = state.openSummary, open.members != nil, (try? ContactCode(parsing: args.joined())) == nil {
                return changeGroup(open, .add(memberNames(args)))
            }
            do {
                let added = try model.addContact(code: args.joined())
                reloadConversations()
                open(added)
                state.focus = .composer
                say("Added \(state.summary(added)?.name ?? "the contact").")
            } catch {
                say(error.description, error: true)
            }
        case "code":
            let code = model.myCode()
            state.overlay = Overlay(kind: .code, title: "Your code", lines: [
                Overlay.Line(copyable: code, .bold),
                Overlay.Line(""),
                Overlay.Line("Give this code to a friend: they type /add and paste it."),
                Overlay.Line("Copied to the clipboard where the terminal allows it; else select it with the mouse "
                             + "(line breaks in a pasted code are ignored) or run `rchat code`.", .dim),
            ])
            request(.copy(code))
        case "open":
            guard !args.isEmpty else { return say("Usage: /open NAME (Tab completes the name)", error: true) }
            guard let contact = target(args) else { return }
            switchTo(contact.id)
            state.focus = .composer
        case "members":
            showMembers()
        case "remove":
            guard let open = openGroup("/remove NAME takes a member out of the open group") else { return }
            guard !args.isEmpty else { return say("Usage: /remove NAME (a member of \(open.name))", error: true) }
            changeGroup(open, .remove(args.joined(separator: " ")))
        case "leave":
            guard let open = openGroup("/leave leaves the open group") else { return }
            changeGroup(open, .leave)
        case "edit":
            composeInEditor()
        case "reconnect":
            if case .stopped = state.connection { return say("Quit and start again.") }
            model.reconnect()
            if case .offline = state.connection { state.connection = .connecting }
            say("Reconnecting now.")
        case "mute", "unmute", "block", "unblock":
            guard let contact = target(args) else { return }
            do {
                switch name {
                case "mute": try model.setMuted(contact.id, true)
                case "unmute": try model.setMuted(contact.id, false)
                case "block": try model.setBlocked(contact.id, true)
                default: try model.setBlocked(contact.id, false)
                }
                reloadConversations()
                let done = ["mute": "Muted \(contact.name): no banners from this conversation.",
                            "unmute": "Unmuted \(contact.name).",
                            "block": "Blocked \(contact.name).",
                            "unblock": "Unblocked \(contact.name)."]
                say(done[name] ?? "")
            } catch {
                say(error.description, error: true)
            }
        case "delete":
            guard let contact = target(args) else { return }
            state.overlay = Overlay(kind: .confirmDelete(contact.id), title: "Delete \(contact.name)?", lines: [
                Overlay.Line("Delete the conversation with \(contact.name) and all its messages from this device?"),
                Overlay.Line("This cannot be undone.", .bold),
            ])
        case "safety":
            guard let contact = target(args) else { return }
            showSafetyNumber(contact)
        case "rename":
            rename(to: line.dropFirst().drop { $0 != " " }.dropFirst())
        case "timer":
            setTimer(args)
        case "file":
            sendAttachment(line, as: nil)
        case "photo":
            sendAttachment(line, as: .photo)
        case "voice":
            startRecording()
        case "search":
            showSearch(String(line.dropFirst().drop { $0 != " " }))
        case "react":
            reactSelected(args.first.map { $0 } ?? "")
        case "help":
            showHelp()
        case "quit", "q":
            quit()
        default:
            say("Unknown command /\(name); ? lists the commands.", error: true)
        }
    }

    /// The open conversation if it is a group; else says what the command needs.
    private func openGroup(_ what: String) -> ConversationSummary? {
        guard let open = state.openSummary, open.members != nil else {
            say("Open a group first: \(what).", error: true)
            return nil
        }
        return open
    }

    /// The names `/add` was given: the whole line when it is one contact's name (names may
    /// hold spaces), else each word.
    private func memberNames(_ args: [String]) -> [String] {
        let whole = args.joined(separator: " ")
        return ContactNames.pick(whole, from: state.conversations.filter { $0.members == nil }, name: \.name) != nil ? [whole] : args
    }

    /// `/add`, `/remove`, `/leave` in a group: a change of its signed log, every member's roster
    /// following it.
    private func changeGroup(_ group: ConversationSummary, _ change: GroupChange) {
        do {
            try model.changeGroup(group.id, change)
            reloadConversations()
            switch change {
            case .add(let names): say("Added \(names.joined(separator: ", ")) to \(group.name).")
            case .remove(let name): say("Removed \(name) from \(group.name).")
            case .leave: say("You left \(group.name): nothing more is written to it.")
            }
        } catch {
            say(error.description, error: true)
        }
    }

    /// `/members`: who is in the open group, admins marked, and who vouches for each.
    func showMembers() {
        guard let open = openGroup("/members lists the open group's members") else { return }
        do {
            let members = try model.groupMembers(of: open.id)
            let current = members.filter { $0.state == "current" }.count
            state.overlay = Overlay(kind: .details, title: "\(open.name) · \(current) member\(current == 1 ? "" : "s")", lines: members.map { m in
                var parts = [TerminalText.sanitized(m.name, breaks: .shown) + (m.isSelf ? " (you)" : "")]
                if m.isAdmin { parts.append("admin") }
                if m.state != "current" { parts.append(m.state) }
                if !m.isSelf { parts.append(m.addedBy.map { "added by \(TerminalText.sanitized($0, breaks: .shown))" } ?? "checked in person") }
                return Overlay.Line(parts.joined(separator: state.glyphs.separator), m.state == "current" ? .plain : .dim)
            })
        } catch {
            say(error.description, error: true)
        }
    }

    /// The conversation a command is about: the one named (as the command line matches
    /// names: the same name, else the only one equal ignoring case), or the open one.
    private func target(_ args: [String]) -> ConversationSummary? {
        let named = args.joined(separator: " ")
        if !named.isEmpty {
            if let found = ContactNames.pick(named, from: state.conversations, name: \.name) { return found }
            say("No contact named \(named): the list shows every name.", error: true)
            return nil
        }
        if let open = state.openSummary { return open }
        say("Open a conversation first, or name the contact.", error: true)
        return nil
    }

    /// `/rename NEW`: the open conversation gets a new name; its window, rows and the
    /// composer's draft stay (everything here is kept by id).
    func rename(to new: Substring) {
        guard let open = state.openSummary else {
            return say("Open a conversation first: /rename NEW renames the open one.", error: true)
        }
        guard !new.isEmpty else { return say("Usage: /rename NEW (the new name for \(open.name))", error: true) }
        do {
            try model.rename(open.id, to: String(new))
            reloadConversations()
            say("Renamed \(open.name) to \(state.summary(open.id)?.name ?? String(new)).")
        } catch {
            say(error.description, error: true)
        }
    }

    /// `/timer 1h`: the open conversation's disappearing-message timer, for both sides;
    /// `/timer` alone: what it is now.
    func setTimer(_ args: [String]) {
        guard let open = state.openSummary else {
            return say("Open a conversation first: /timer DURATION sets its disappearing messages.", error: true)
        }
        guard let word = args.first else {
            return say(open.timer.phrase.map { "Messages here disappear after \($0); /timer off turns that off." }
                       ?? "Disappearing messages are off here; /timer 1h (or 30s, 5m, 8h, 1d, 1w, 4w) turns them on.")
        }
        guard args.count == 1, let timer = DisappearingTimer(word: word.lowercased()) else {
            return say(DisappearingTimer.wordsRefusal, error: true)
        }
        do {
            try model.setTimer(timer, for: open.id)
            reloadConversations()
            say(timer.phrase.map { "Disappearing messages set to \($0) for you and \(open.name)." }
                ?? "Disappearing messages turned off for you and \(open.name).")
        } catch {
            say(error.description, error: true)
        }
    }

    func deleteConversation(_ conversation: ConversationID) {
        let name = state.summary(conversation)?.name ?? "the conversation"
        do {
            try model.delete(conversation)
            if state.openConversation == conversation { close() }
            drafts.forget(conversation)   // the store's went with the conversation
            reloadConversations()
            say("Deleted \(name).")
        } catch {
            say(error.description, error: true)
        }
    }

    /// `r`: a message that may not have arrived, or every message of a row, sent again.
    func resendSelected() {
        guard let conversation = state.openConversation, let index = state.selected else {
            return say("Select a message or row first (Up/Down).")
        }
        if state.window?.item(at: index) == nil { reveal(index) }
        guard let item = state.window?.item(at: index) else { return }
        let ids: [MessageID]
        switch item {
        case .message(let m):
            guard m.direction == .outgoing, let status = m.status else {
                return say("Only your own messages can be resent.")
            }
            // Held back for a device not verified: Resend sends it there (the keypress is the consent).
            // An edit or a delete of it that may not have arrived goes again with it.
            let action = m.pendingAction.flatMap { $0.status.offersResend ? $0.id : nil }
            guard status.offersResend || m.waiting != nil || action != nil else {
                return say("Nothing to resend: this message is \(status.rawValue).")
            }
            ids = (status.offersResend || m.waiting != nil ? [m.id] : []) + (action.map { [$0] } ?? [])
        case .row(let r):
            guard r.action == .resend, !r.messageIDs.isEmpty else { return say("This row has nothing to resend.") }
            ids = r.messageIDs
        }
        do {
            try model.resend(in: conversation, messages: ids)
            say(ids.count == 1 ? "Resending 1 message." : "Resending \(ids.count) messages.")
        } catch {
            say(error.description, error: true)
        }
    }

    /// The selected message, if it is one a person wrote (not a row, not a change).
    private func selectedMessage() -> (ConversationID, MessageItem)? {
        guard let conversation = state.openConversation, let index = state.selected,
              case .message(let m)? = state.window?.item(at: index), !m.showsAsRow else { return nil }
        return (conversation, m)
    }

    /// `e` on this side's own text message: the composer takes its text; Enter sends the
    /// new one as an edit (Esc: not editing).
    func startEdit() {
        guard let (conversation, m) = selectedMessage() else { return say("Select a message first (Up/Down).") }
        guard m.direction == .outgoing else { return say("Only your own messages can be edited.") }
        guard !m.isUnsent else { return say("A message deleted for everyone cannot be edited.") }
        guard EditPolicy.isEditable(m.content) else { return say("Only a text message can be edited.") }
        state.replyingTo = ReplyDraft(conversation: conversation, target: m.id, quote: .message(author: "You", text: m.text), purpose: .edit)
        state.composer.restore(m.text)
        state.selected = nil
        state.focus = .composer
    }

    /// `d` on this side's own message: asks first; `d` again on it deletes it for everyone.
    func deleteSelected() {
        guard let (conversation, m) = selectedMessage() else { return say("Select a message first (Up/Down).") }
        guard m.direction == .outgoing else { return say("Only your own messages can be deleted for everyone.") }
        guard !m.isUnsent else { return say("That message is deleted already.") }
        guard state.confirmingDelete == m.id else {
            state.confirmingDelete = m.id
            return say("Delete this message for everyone? Press d again to delete it.")
        }
        state.confirmingDelete = nil
        do {
            try model.act(in: conversation, .unsend(m.id))
            say("Deleted for everyone.")
        } catch {
            say(error.description, error: true)
        }
    }

    /// `+` (nil: the quick reaction, or taking it back) and `/react EMOJI` ("": take this
    /// side's reaction back) on the selected message. The notices name no emoji: a terminal
    /// font may have none to draw.
    func reactSelected(_ emoji: String?) {
        guard let (conversation, m) = selectedMessage() else {
            return say("Select a message first (Up/Down), then /react EMOJI.", error: emoji != nil)
        }
        let mine = m.reactions.first { $0.from == "You" }?.emoji
        let chosen: String? = switch emoji {
        case nil: mine == ReactionPolicy.quickReaction ? nil : ReactionPolicy.quickReaction
        case ""?: nil
        case let e?: e
        }
        if chosen == nil, mine == nil { return say("You have not reacted to this message.") }
        do {
            try model.act(in: conversation, .react(m.id, emoji: chosen))
            say(chosen == nil ? "Reaction taken back." : "Reacted.")
        } catch {
            say(error.description, error: true)
        }
    }

    /// `i`: why a message's status is what it is — each step with its time.
    /// `q` on a selected message: the composer quotes it; what is sent next answers it.
    func startReply() {
        guard let conversation = state.openConversation, let index = state.selected,
              let item = state.window?.item(at: index) else {
            return say("Select a message first (Up/Down).")
        }
        guard case .message(let m) = item, !m.showsAsRow else { return say("Only a message can be answered.") }
        let author = m.direction == .outgoing ? "You" : m.author ?? m.peerName ?? "They"
        state.replyingTo = ReplyDraft(conversation: conversation, target: m.id, quote: .message(author: author, text: m.text))
        state.selected = nil
        state.focus = .composer
    }

    func showDetails() {
        guard let conversation = state.openConversation, let index = state.selected,
              let item = state.window?.item(at: index) else {
            return say("Select a message first (Up/Down).")
        }
        guard case .message(let m) = item else {
            if case .row(let r) = item {
                say("This row is about \(r.messageIDs.count) message\(r.messageIDs.count == 1 ? "" : "s").")
            }
            return
        }
        let time = TimeText(timeZone: state.timeZone)
        var lines: [Overlay.Line] = []
        if m.direction == .outgoing, let status = m.status {
            lines.append(Overlay.Line("Status: \(status.rawValue)", .bold))
            if let waiting = m.waitingText {
                let name = TerminalText.sanitized(m.peerName ?? "They", breaks: .shown)
                lines.append(Overlay.Line(TerminalText.sanitized(waiting.prefix(1).uppercased() + waiting.dropFirst(), breaks: .shown) + "."))
                lines.append(Overlay.Line("r sends it to the new device now; entering \(name)'s code again sends everything.", .dim))
            }
        } else {
            lines.append(Overlay.Line("Received \(time.full(m.at))", .bold))
        }
        lines.append(Overlay.Line(""))
        let timeline = model.timeline(of: conversation, message: m.id)
        if timeline.isEmpty { lines.append(Overlay.Line("No status steps recorded.", .dim)) }
        let labelWidth = 20
        var member: String?
        for entry in timeline {
            if let name = entry.member, name != member {
                // A group's message: each member's own timeline, under their name.
                if member != nil { lines.append(Overlay.Line("")) }
                lines.append(Overlay.Line(TerminalText.sanitized(name, breaks: .shown), .bold))
                member = name
            }
            lines.append(Overlay.Line(Wrap.pad(Self.label(entry.step), width: labelWidth) + time.full(entry.at)))
        }
        if let pending = m.pendingAction {
            lines.append(Overlay.Line(""))
            lines.append(Overlay.Line("Your \(pending.kind == .edit ? "edit" : "delete for everyone"): \(pending.status.rawValue)", .bold))
        }
        if m.isEdited {
            // Each version with its time, the original first.
            lines.append(Overlay.Line(""))
            lines.append(Overlay.Line("Versions", .bold))
            for (n, version) in m.versions.enumerated() {
                let label = n == 0 ? "Original" : "Edit \(n)"
                lines.append(Overlay.Line(Wrap.pad(label, width: labelWidth) + time.full(version.at)))
                // The box cuts what does not fit.
                lines.append(Overlay.Line("  " + TerminalText.sanitized(version.text, breaks: .shown), .dim))
            }
        }
        if !m.reactions.isEmpty {
            // Who reacted, each with their latest.
            lines.append(Overlay.Line(""))
            lines.append(Overlay.Line("Reactions", .bold))
            for r in m.reactions {
                lines.append(Overlay.Line(Wrap.pad(TerminalText.sanitized(r.from, breaks: .shown), width: labelWidth)
                                          + TerminalText.sanitized(r.emoji, breaks: .shown)))
            }
        }
        lines.append(Overlay.Line(""))
        lines.append(Overlay.Line("Message id \(m.id.hex)", .dim))
        state.overlay = Overlay(kind: .details, title: "Message details", lines: lines)
    }

    static func label(_ step: TimelineEntry.Step) -> String {
        switch step {
        case .stored: "Stored"
        case .relayAcknowledged: "Relay acknowledged"
        case .delivered: "Delivered"
        case .read: "Read"
        case .resent: "Resent"
        case .status(let s): s.rawValue
        }
    }

    func showHelp() {
        var lines: [Overlay.Line] = [Overlay.Line("Keys", .bold)]
        let keyWidth = KeyMap.help.map { TextWidth.columns(of: $0.keys) }.max() ?? 0
        lines += KeyMap.help.map { Overlay.Line(Wrap.pad($0.keys, width: keyWidth + 2) + $0.does, hang: keyWidth + 2) }
        lines += [Overlay.Line(""), Overlay.Line("Commands (type in the composer, then Enter)", .bold)]
        let extra = options.demoCommands.map { (command: "/" + $0.name, does: $0.help) }
        let all = KeyMap.slashHelp + extra
        let commandWidth = all.map { TextWidth.columns(of: $0.command) }.max() ?? 0
        lines += KeyMap.slashHelp.map { Overlay.Line(Wrap.pad($0.command, width: commandWidth + 2) + $0.does, hang: commandWidth + 2) }
        if !extra.isEmpty {
            lines += [Overlay.Line(""), Overlay.Line("Demo", .bold)]
            lines += extra.map { Overlay.Line(Wrap.pad($0.command, width: commandWidth + 2) + $0.does, hang: commandWidth + 2) }
        }
        lines += [Overlay.Line(""), Overlay.Line("Statuses", .bold)]
        for status in MessageStatus.allCases {
            lines.append(Overlay.Line(lead: state.glyphs.status(status), status.rawValue, hang: 4))
        }
        state.overlay = Overlay(kind: .help, title: "Help", lines: lines)
    }
}
