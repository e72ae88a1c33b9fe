import RChatCore

/// `/search WORDS`: the messages found, newest first, in an overlay; Up/Down choose, Enter
/// opens the conversation at the message (selected), Esc closes.
extension ChatView {
    func showSearch(_ text: String) {
        let query: SearchQuery
        do { query = try SearchQuery(text) } catch {
            return say("Usage: /search WORDS (\(error.description)).", error: true)
        }
        let hits: [SearchHit]
        do { hits = try model.search(query, in: nil) } catch {
            return say(error.description, error: true)
        }
        var overlay = Overlay(kind: .search(SearchResults(query: query, hits: hits)), title: "", lines: [])
        Self.layOut(&overlay, rows: state.rows, time: TimeText(timeZone: state.timeZone), names: state.conversations, glyphs: state.glyphs)
        state.overlay = overlay
    }

    /// A key while the results are up. Keys other than these close them and then do what
    /// they do without them: nothing typed is lost.
    func searchKey(_ key: Key) {
        guard var overlay = state.overlay, case .search(var results) = overlay.kind else { return }
        let page = max(1, state.rows - 6)
        switch key {
        case .escape:
            state.overlay = nil
            return
        case .enter:
            state.overlay = nil
            if results.hits.indices.contains(results.chosen) { openHit(results.hits[results.chosen]) }
            return
        case .up: results.chosen -= 1
        case .down: results.chosen += 1
        case .pageUp: results.chosen -= page
        case .pageDown: results.chosen += page
        case .home: results.chosen = 0
        case .end: results.chosen = results.hits.count - 1
        default:
            state.overlay = nil
            handle(key)
            return
        }
        results.chosen = min(max(0, results.chosen), max(0, results.hits.count - 1))
        overlay.kind = .search(results)
        Self.layOut(&overlay, rows: state.rows, time: TimeText(timeZone: state.timeZone), names: state.conversations, glyphs: state.glyphs)
        state.overlay = overlay
    }

    /// The overlay's title and lines for its results: one line per message (conversation,
    /// time, who, the words around the match), the chosen one reversed and scrolled into view.
    static func layOut(_ overlay: inout Overlay, rows: Int, time: TimeText, names: [ConversationSummary], glyphs: Glyphs) {
        guard case .search(let results) = overlay.kind else { return }
        let count = results.hits.count
        overlay.title = "Search: \(results.query) \(glyphs.dash) \(count == SearchQuery.resultLimit ? "the newest \(count)" : String(count)) found"
        guard count > 0 else {
            overlay.lines = [Overlay.Line("No message has \(results.query).")]
            return
        }
        let nameOf = Dictionary(names.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        let nameWidth = min(16, results.hits.map { TextWidth.columns(of: nameOf[$0.conversation] ?? "?") }.max() ?? 0)
        overlay.lines = results.hits.enumerated().map { n, hit in
            let name = nameOf[hit.conversation] ?? "?"
            let who = hit.direction == .outgoing ? "You" : name
            let text = Wrap.pad(name, width: nameWidth) + "  " + time.date(hit.at) + " " + time.clock(hit.at) + "  " + who + ": " + hit.snippet
            return Overlay.Line(entry: text, n == results.chosen ? .reverse : .plain)
        }
        let body = max(1, rows - 4)
        overlay.scroll = min(max(overlay.scroll, results.chosen - body + 1), results.chosen)
    }

    /// Opens the hit's conversation with its message selected and on screen.
    func openHit(_ hit: SearchHit) {
        guard state.summary(hit.conversation) != nil else {
            return say("That conversation no longer exists.", error: true)
        }
        if state.openConversation != hit.conversation { open(hit.conversation) }
        state.window?.jump(to: hit.index, model: model)
        // The store's count placed it; should the conversation have changed since the
        // search, look for the message itself among what is loaded.
        var index = hit.index
        if state.window?.item(at: index)?.message?.id != hit.message {
            guard let window = state.window,
                  let found = window.items.firstIndex(where: { $0.message?.id == hit.message }) else {
                return say("That message is no longer in the conversation.", error: true)
            }
            index = window.start + found
        }
        state.focus = .conversation
        state.selected = index
        showAtTop(index)
    }
}
