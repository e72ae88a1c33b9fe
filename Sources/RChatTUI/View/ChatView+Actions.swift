import RChatCore

/// What the user asks for: sending, Resend, details, help, and the slash commands.
extension ChatView {
    func submit() {
        let line = state.composer.text
        guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { return }
        if line.hasPrefix("/") && !line.hasPrefix("//") {
            _ = state.composer.take()
            runCommand(line)
            return
        }
        guard let contact = state.openContact else {
            say("Open a conversation first: Tab to the list, then Enter.", error: true)
            return
        }
        // "//text" sends "/text": a message may start with a slash.
        let text = line.hasPrefix("//") ? String(line.dropFirst()) : line
        _ = state.composer.take()
        do {
            try model.send(to: contact, content: .text(text))
        } catch {
            state.composer.restore(line)   // nothing the user wrote is lost
            say(error.description, error: true)
            return
        }
        goToNewest()
        state.window?.syncTail(model: model)
    }

    func runCommand(_ line: String) {
        let words = line.dropFirst().split(separator: " ").map(String.init)
        guard let name = words.first?.lowercased() else { return }
        let args = Array(words.dropFirst())
        if let demo = options.demoCommands.first(where: { $0.name.lowercased() == name }) {
            if let reply = demo.action(args) { say(reply) }
            return
        }
        switch name {
        case "add":
            guard args.count == 1 else { return say("Usage: /add CODE (the code your contact gave you)", error: true) }
            do {
                let contact = try model.addContact(code: args[0])
                reloadConversations()
                open(contact)
                state.focus = .composer
                say("Added \(contact).")
            } catch {
                say(error.description, error: true)
            }
        case "code":
            state.overlay = Overlay(kind: .code, title: "Your code", lines: [
                Overlay.Line(model.myCode(), .bold),
                Overlay.Line(""),
                Overlay.Line("Give this code to a friend: they type /add and paste it."),
                Overlay.Line("To copy it in one piece, run `rchat code` in another terminal.", .dim),
            ])
        case "mute", "unmute", "block", "unblock":
            guard let contact = target(args) else { return }
            do {
                switch name {
                case "mute": try model.setMuted(contact, true)
                case "unmute": try model.setMuted(contact, false)
                case "block": try model.setBlocked(contact, true)
                default: try model.setBlocked(contact, false)
                }
                reloadConversations()
                let done = ["mute": "Muted \(contact): no banners from this conversation.",
                            "unmute": "Unmuted \(contact).",
                            "block": "Blocked \(contact).",
                            "unblock": "Unblocked \(contact)."]
                say(done[name] ?? "")
            } catch {
                say(error.description, error: true)
            }
        case "delete":
            guard let contact = target(args) else { return }
            state.overlay = Overlay(kind: .confirmDelete(contact: contact), title: "Delete \(contact)?", lines: [
                Overlay.Line("Delete the conversation with \(contact) and all its messages from this device?"),
                Overlay.Line("This cannot be undone.", .bold),
            ])
        case "help":
            showHelp()
        case "quit", "q":
            quit()
        default:
            say("Unknown command /\(name); ? lists the commands.", error: true)
        }
    }

    /// The contact a command is about: the one named, or the open conversation.
    private func target(_ args: [String]) -> String? {
        let named = args.joined(separator: " ")
        if !named.isEmpty { return named }
        if let open = state.openContact { return open }
        say("Open a conversation first, or name the contact.", error: true)
        return nil
    }

    func deleteConversation(_ contact: String) {
        do {
            try model.delete(contact)
            if state.openContact == contact { close() }
            reloadConversations()
            say("Deleted \(contact).")
        } catch {
            say(error.description, error: true)
        }
    }

    /// `r`: a message that may not have arrived, or every message of a row, sent again.
    func resendSelected() {
        guard let contact = state.openContact, let index = state.selected else {
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
            guard status.offersResend else { return say("Nothing to resend: this message is \(status.rawValue).") }
            ids = [m.id]
        case .row(let r):
            guard r.action == .resend, !r.messageIDs.isEmpty else { return say("This row has nothing to resend.") }
            ids = r.messageIDs
        }
        do {
            try model.resend(to: contact, messages: ids)
            say(ids.count == 1 ? "Resending 1 message." : "Resending \(ids.count) messages.")
        } catch {
            say(error.description, error: true)
        }
    }

    /// `i`: why a message's status is what it is — each step with its time.
    func showDetails() {
        guard let contact = state.openContact, let index = state.selected,
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
        } else {
            lines.append(Overlay.Line("Received \(time.full(m.at))", .bold))
        }
        lines.append(Overlay.Line(""))
        let timeline = model.timeline(of: contact, message: m.id)
        if timeline.isEmpty { lines.append(Overlay.Line("No status steps recorded.", .dim)) }
        let labelWidth = 20
        for entry in timeline {
            lines.append(Overlay.Line(Wrap.pad(Self.label(entry.step), width: labelWidth) + time.full(entry.at)))
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
            lines.append(Overlay.Line(Wrap.pad(state.glyphs.status(status).text, width: 4) + status.rawValue, hang: 4))
        }
        state.overlay = Overlay(kind: .help, title: "Help", lines: lines)
    }
}
