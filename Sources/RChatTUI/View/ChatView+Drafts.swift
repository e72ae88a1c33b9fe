import RChatCore

/// Each conversation's draft: the open one's is in the composer, the others' are held here,
/// and the store keeps them across restarts. A draft is written when it is left (another
/// conversation opened, the view closed or quit), right after a send empties it, and
/// otherwise `DraftBook.saveDelay` seconds after the first change not yet written, so a
/// crash loses at most the last moment of typing and a burst of keys costs one write.
struct DraftBook {
    /// Seconds between the first unwritten change and its write.
    static let saveDelay: Int64 = 2

    /// What the store holds of a conversation's draft, as far as the view knows.
    enum Stored: Equatable {
        /// Its draft could not be read: the view never writes "no draft" over it.
        case unread
        /// This, as last read or written.
        case holds(Draft?)
        /// The last write failed with this error: tried again at the next change or save point.
        case failed(String)
    }

    /// Drafts of the conversations that are not open.
    var held: [ConversationID: Draft] = [:]
    /// Conversations whose draft the view read or wrote (absent: never looked at).
    var stored: [ConversationID: Stored] = [:]
    /// Changed drafts not written yet, with the time (unix seconds) their write is due.
    var due: [ConversationID: Int64] = [:]

    /// The earliest time a pending write is due.
    var nextDue: Int64? { due.values.min() }

    /// Forgets a conversation that is gone (its store row went with it).
    mutating func forget(_ conversation: ConversationID) {
        held[conversation] = nil
        stored[conversation] = nil
        due[conversation] = nil
    }
}

extension ChatView {
    /// The draft the view holds for `conversation`: the composer's when it is open.
    func draft(of conversation: ConversationID) -> Draft? {
        if let held = drafts.held[conversation] { return held }
        return conversation == state.openConversation ? state.composer.kept : nil
    }

    /// Puts the conversation's draft in the composer: the one held since it was left, or the
    /// store's. A failed read is one line in the status bar and an empty composer.
    func showDraft(of conversation: ConversationID) {
        if let held = drafts.held.removeValue(forKey: conversation) {
            state.composer.show(held)
            return
        }
        do {
            let stored = try model.draft(of: conversation)
            state.composer.show(stored)
            if drafts.stored[conversation] == nil || drafts.stored[conversation] == .unread {
                drafts.stored[conversation] = .holds(stored)
            }
        } catch {
            state.composer.show(nil)
            drafts.stored[conversation] = .unread
            say("The draft to \(name(of: conversation)) could not be read: \(error.description)", error: true)
        }
    }

    /// Text typed while no conversation was open goes to the one opened, after its own
    /// draft if it has one: nothing typed is dropped by opening a conversation.
    func carry(_ typed: Draft, into conversation: ConversationID) {
        let merged = state.composer.kept.flatMap { own in
            Draft(text: own.text + " " + typed.text, cursor: own.text.count + 1 + typed.cursor)
        } ?? typed
        state.composer.show(merged)
        noteDraftChanged(conversation, now: false)
    }

    /// The open conversation is being left: its draft is held and written now.
    func keepDraftOfOpenConversation() {
        guard let open = state.openConversation else { return }
        drafts.held[open] = state.composer.kept
        state.composer.show(nil)
        saveDraft(open)
    }

    /// The open conversation's draft may have changed (typed, edited, sent, cleared). Costs
    /// nothing per key however long the draft: the text is compared only when written.
    func noteDraftChanged(_ conversation: ConversationID, now immediately: Bool) {
        if immediately { return saveDraft(conversation) }
        if state.composer.isEmpty, drafts.stored[conversation] == .holds(nil) {
            drafts.due[conversation] = nil   // emptied, as the store has it
        } else if drafts.due[conversation] == nil {   // the first change sets the time
            drafts.due[conversation] = state.now + DraftBook.saveDelay
        }
    }

    /// Whether the store may hold something else than the view's draft.
    func needsWrite(_ conversation: ConversationID) -> Bool {
        let current = draft(of: conversation)
        switch drafts.stored[conversation] {
        case nil: return current != nil
        case .holds(let stored)?: return stored != current
        case .unread?: return current != nil   // nothing typed is never written over what could not be read
        case .failed?: return true
        }
    }

    /// Writes the conversation's draft unless the store holds it already.
    func saveDraft(_ conversation: ConversationID) {
        drafts.due[conversation] = nil
        guard needsWrite(conversation) else { return }
        let current = draft(of: conversation)
        do {
            try model.setDraft(current, for: conversation)
            drafts.stored[conversation] = .holds(current)
        } catch {
            drafts.stored[conversation] = .failed(error.description)
            say("The draft to \(name(of: conversation)) was not saved: \(error.description)", error: true)
        }
    }

    /// Writes the drafts whose time has come.
    func saveDueDrafts() {
        for (conversation, at) in drafts.due where at <= state.now { saveDraft(conversation) }
    }

    /// Writes every draft not yet written (before quitting, or when the terminal goes away).
    public func saveDrafts() {
        thread.check()
        state.now = now()
        for conversation in Set(drafts.stored.keys).union(drafts.due.keys) { saveDraft(conversation) }
    }

    /// Drafts that would be lost by quitting now, after trying to write them: the
    /// conversation and why.
    func draftsAtRisk() -> [(conversation: ConversationID, error: String)] {
        saveDrafts()
        return drafts.stored.compactMap { entry in
            if case .failed(let error) = entry.value, draft(of: entry.key) != nil { (entry.key, error) } else { nil }
        }
        .sorted { name(of: $0.conversation) < name(of: $1.conversation) }
    }

    func name(of conversation: ConversationID) -> String {
        state.summary(conversation)?.name ?? "a conversation"
    }

    // MARK: Quitting

    /// Ctrl-Q, Ctrl-C with nothing typed, `/quit`: quits at once when nothing typed would be
    /// lost or left behind; otherwise asks, saying what happens to each draft.
    func quit() {
        let atRisk = draftsAtRisk()
        let typed = state.composer.kept
        guard typed != nil || !atRisk.isEmpty else {
            quitRequested = true
            return
        }
        var lines: [Overlay.Line] = []
        if typed != nil {
            if let open = state.openConversation {
                if !atRisk.contains(where: { $0.conversation == open }) {
                    lines.append(Overlay.Line("Your draft to \(name(of: open)) is kept: it is back in the composer "
                                              + "when you open \(name(of: open)) again."))
                }
            } else {
                lines.append(Overlay.Line("What you typed is not kept: no conversation is open.", .bold))
            }
        }
        for risk in atRisk {
            lines.append(Overlay.Line("Your draft to \(name(of: risk.conversation)) could not be saved "
                                      + "(\(risk.error)): it is lost if you quit.", .bold))
        }
        state.overlay = Overlay(kind: .confirmQuit, title: "Quit?", lines: lines)
    }
}
