import RChatCore

/// A box over the screen: help, message details, your code, a question, or search results.
public struct Overlay: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case help, details, code
        /// Asks before deleting a conversation: `y` deletes, anything else keeps it.
        case confirmDelete(ConversationID)
        /// Asks once whether new messages may raise desktop alerts: `y` or `n` (Esc: no);
        /// any other key leaves it up.
        case alertPermission
        /// Asks before quitting with something typed, saying what happens to each draft:
        /// `y` quits, anything else stays.
        case confirmQuit
        /// `/search WORDS`: one line per message found; Up/Down choose, Enter opens it.
        case search(SearchResults)
        /// `a` on a request that uses a contact's name: `r` gives its keys to that contact's
        /// conversation, `n` accepts it as a contact of its own, anything else leaves it.
        case acceptRequest(ConversationID, namesake: ConversationID)
        /// `d` on a request: `y` declines it, anything else keeps it.
        case confirmDecline(ConversationID)
        /// `/safety`: the contact's safety number.
        case safety
    }

    public struct Line: Equatable, Sendable {
        /// How a line longer than the box is laid out.
        public enum Fit: Equatable, Sendable {
            /// Broken between words inside the box (`hang` columns in after the first line).
            case wrapped(hang: Int)
            /// Text to copy with the mouse: drawn from the screen's left edge across its
            /// whole width, outside the box's borders, never broken between words nor
            /// padded. It is one row when the screen is wide enough; otherwise it continues
            /// at the left edge of the next row, so one drag selects exactly its characters
            /// (a terminal may add line breaks between the rows: `/add` and `rchat add`
            /// remove whitespace from a pasted code).
            case edgeToEdge
            /// One row, cut with an ellipsis where the box ends and padded to its width (a
            /// list entry: one line per entry, so a reversed line shows the choice).
            case cut
        }
        /// Cells at the start of a line in a style of their own: a status in the help legend,
        /// drawn as a message line draws it.
        public struct Lead: Equatable, Sendable {
            public var text: String
            public var style: CellStyle
        }
        public var text: String
        public var style: CellStyle
        public var fit: Fit
        /// Drawn over the start of the line's first row (its text begins with as many columns).
        public var lead: Lead?
        /// A line wrapped in the box; wrapped lines after the first start `hang` columns in
        /// (a help entry's text stays beside its keys).
        public init(_ text: String, _ style: CellStyle = .plain, hang: Int = 0) {
            self.text = text; self.style = style; self.fit = .wrapped(hang: hang)
        }
        /// `lead` in its own style, then `text` from column `hang` (wrapped lines too).
        public init(lead: (text: String, style: CellStyle), _ text: String, hang: Int) {
            self.init(Wrap.pad(lead.text, width: hang) + text, hang: hang)
            self.lead = Lead(text: lead.text, style: lead.style)
        }
        public init(copyable text: String, _ style: CellStyle = .plain) {
            self.text = text; self.style = style; self.fit = .edgeToEdge
        }
        public init(entry text: String, _ style: CellStyle = .plain) {
            self.text = text; self.style = style; self.fit = .cut
        }
    }

    public var kind: Kind
    public var title: String
    public var lines: [Line]
    /// First line shown, for overlays longer than the screen.
    public var scroll = 0

    public init(kind: Kind, title: String, lines: [Line]) {
        self.kind = kind; self.title = title; self.lines = lines
    }
}

/// What `/search` found, and which of it is chosen.
public struct SearchResults: Equatable, Sendable {
    public var query: SearchQuery
    /// Newest first.
    public var hits: [SearchHit]
    /// Index into `hits`.
    public var chosen = 0

    public init(query: SearchQuery, hits: [SearchHit]) {
        self.query = query; self.hits = hits
    }
}

/// The line in the status bar for a message in a conversation that is not on screen.
public struct Banner: Equatable, Sendable {
    public var text: String
    public var until: Int64
    /// What arrived while it is up: counted in `text`.
    var arrivals: [AlertPolicy.Arrival] = []
}

/// Where the conversation is scrolled to: the item at the bottom of the pane and how many
/// of its lines are below the pane. No anchor means following the newest message.
public struct Anchor: Equatable, Sendable {
    public var item: Int
    public var linesBelow: Int
}
