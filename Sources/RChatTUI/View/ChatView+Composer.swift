import RChatCore

/// The composer's own modes (Ctrl-X waiting for its second key, a Ctrl-R search), Tab
/// completion and composing in an external editor.
extension ChatView {
    /// A key while the composer is in a mode of its own; true when the mode took it.
    func composerModeKey(_ key: Key) -> Bool {
        switch state.composer.mode {
        case .editing:
            return false
        case .afterCtrlX:
            state.composer.endCtrlX()
            switch key {
            case .control("e"): composeInEditor(); return true
            case .control("g"): return true
            default: return false   // not a Ctrl-X command: the key does what it always does
            }
        case .searching:
            switch key {
            case .control("r"): state.composer.search(.older)
            case .character(let c): state.composer.search(.type(c))
            case .backspace, .control("h"): state.composer.search(.backspace)
            case .enter: state.composer.search(.accept)
            case .escape, .control("g"), .control("c"): state.composer.search(.cancel)
            case .focusIn, .focusOut: break
            default:
                // As in bash: any other key takes the match and then does what it does.
                state.composer.search(.accept)
                return false
            }
            return true
        }
    }

    /// Tab on a `/command`.
    func complete() {
        let text = state.composer.text
        let name = text.dropFirst().prefix { !$0.isWhitespace }.lowercased()
        if KeyMap.commandsTakingAPath.contains(name), text.dropFirst(1 + name.count).first?.isWhitespace == true {
            let lead = "/" + text.dropFirst().prefix { !$0.isWhitespace } + text.dropFirst(1 + name.count).prefix { $0.isWhitespace }
            var field = state.composer
            completePath(&field, lead: String(lead))
            state.composer.restore(field.text)
            return
        }
        let commands = KeyMap.slashCommandNames + options.demoCommands.map(\.name)
        switch Completion.complete(state.composer.text, commands: commands, takingAName: KeyMap.commandsTakingAName,
                                   names: state.conversations.map(\.name), words: KeyMap.commandWords) {
        case .completed(let text):
            state.composer.restore(text)
        case .candidates(let text, let all):
            state.composer.restore(text)
            say(all.joined(separator: "  "))
        case .none:
            say("Nothing to complete: /help lists the commands.")
        }
    }

    /// Ctrl-X Ctrl-E, `/edit`: asks the backend to run the editor on the draft.
    func composeInEditor() {
        guard options.draftDirectory != nil else {
            return say("No editor here: this view has no account home to write the draft in.", error: true)
        }
        editorRequest = state.composer.text
    }

    /// The draft the backend should hand to the editor, once.
    public func takeEditorRequest() -> String? {
        thread.check()
        defer { editorRequest = nil }
        return editorRequest
    }

    /// What the editor gave back: the new draft, or a line saying why not (the draft stays).
    public func finishEditing(_ outcome: ExternalEditor.Outcome) {
        thread.check()
        state.now = now()
        state.focus = .composer
        switch outcome {
        case .edited(let text):
            state.composer.restore(text)
            if let open = state.openConversation { noteDraftChanged(open, now: false) }
        case .failed(let line): say(line, error: true)
        }
    }
}
