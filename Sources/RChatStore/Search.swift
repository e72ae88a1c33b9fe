import RChatCore
import RChatSQL

// Full-text search over messages (the schema step `SchemaSearch`, `message_search`).

extension StoreAccess {
    /// The newest messages (at most `limit`) whose text has every word of `query` as the
    /// start of one of its words, newest first (the order they were stored here); in one
    /// conversation, or in every one but deleted contacts' (nil).
    ///
    /// `index` is `position - 1`: positions run 1, 2, 3, … over a conversation's messages and
    /// rows together, the count `conversationLength` and the view's paging rely on too.
    public func search(_ query: SearchQuery, in conversation: ConversationID? = nil,
                       limit: Int = SearchQuery.resultLimit) throws -> [SearchHit] {
        guard limit > 0 else { return [] }
        return try database.query("""
            SELECT m.conversation_id AS conversation_id, m.id AS id, m.direction AS direction, m.created_at AS created_at,
                   m.position AS position, snippet(message_search, 0, '', '', '…', 12) AS snippet,
                   CASE WHEN m.conversation_id < 0 THEN a.name END AS author
            FROM message_search
            JOIN messages AS m ON m.rowid = message_search.rowid
            LEFT JOIN contacts AS c ON c.id = m.conversation_id
            LEFT JOIN contacts AS a ON a.id = m.author_id
            WHERE message_search MATCH ?1 AND coalesce(c.deleted, 0) = 0 AND (?2 IS NULL OR m.conversation_id = ?2)
            ORDER BY message_search.rowid DESC LIMIT ?3
            """, [.text(query.matchExpression), SQLValue(conversation?.rawValue), SQLValue(limit)]).map { row in
            var hit = SearchHit(conversation: ConversationID(try row.int64("conversation_id")), message: try row.messageID("id", table: "messages"),
                                direction: try row.enumValue("direction", table: "messages", as: Direction.self),
                                at: try row.int64("created_at"), snippet: Self.oneLine(try row.string("snippet")),
                                index: Int(try row.int64("position") - 1))
            hit.author = try row.optionalString("author")
            return hit
        }
    }

    /// Writes the search index entries of messages just stored (by rowid, in the same
    /// transaction), many to a statement: the text of text messages and replies (never the
    /// quote); anything else has none.
    func indexForSearch(_ stored: [(row: Int64, content: MessageContent)]) throws {
        var args: [SQLValue] = []
        for (row, content) in stored {
            if let text = content.writtenText { args += [.integer(row), .text(text)] }
        }
        var offset = 0
        while offset < args.count {
            let rows = BatchSQL.chunk((args.count - offset) / 2)
            try database.execute(SearchSQL.index[rows]!, Array(args[offset..<(offset + rows * 2)]))
            offset += rows * 2
        }
    }

    /// Runs of whitespace (line breaks included) as one space.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

/// The index's multi-row insert, built once.
private enum SearchSQL {
    static let index = BatchSQL.inserts("INSERT INTO message_search (rowid, text)", row: "(?, ?)")
}

extension SearchQuery {
    /// The FTS5 query: each word a quoted phrase (a `"` inside doubled) matching as a
    /// prefix, all of them required. Inside quotes FTS5 reads no operator, so nothing the
    /// user typed is syntax.
    var matchExpression: String {
        words.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"*" }.joined(separator: " AND ")
    }
}
