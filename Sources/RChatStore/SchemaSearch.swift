/// A schema step: full-text search over messages (SQLite FTS5).
///
/// `message_search` indexes the text of every text message (content kind 1: the kind byte,
/// then UTF-8) by the message's rowid; attachments and control items are not indexed. It
/// keeps no copy of the text: its content table is the view `message_search_text`, which
/// reads the text out of `messages.content`, so snippets come from the message itself.
/// Words are the unicode61 tokenizer's (letters and digits; case and accents folded). No
/// prefix indexes: they made storing a message about a third slower (every word written up
/// to three times), for a p99 search of 6 ms instead of 17 at 100,000 messages, already
/// well under the 50 ms target.
///
/// The store writes a message's index entry itself, in the transaction that stores the
/// message (`indexForSearch`, called by both of its inserts: the engine's batch and a send),
/// many rows to a statement. Not by trigger: FTS5 flushes what it holds in memory at every
/// statement journal, and a trigger opens one per row, which made every insert several
/// times slower. A trigger on DELETE removes the entry with the row (deletes are rare),
/// giving the index the exact text it was given, as an external-content table needs. A
/// message's content never changes (`messages_content_never_changes`) and neither does its
/// rowid (below), so no UPDATE can leave the index stale. Messages stored before this step are
/// indexed by the step itself (`rebuild`).
///
/// A later step that rebuilds `messages` must drop the view and the triggers first and
/// make them again afterwards (as step 21, `SchemaReplies`, last made them: replies too),
/// then `rebuild` the index.
enum SchemaSearch {
    static let sql = """
    CREATE VIEW message_search_text (rowid, text) AS
        SELECT rowid, CAST(substr(content, 2) AS TEXT) FROM messages WHERE substr(content, 1, 1) = x'01';

    CREATE VIRTUAL TABLE message_search USING fts5(
        text, content = 'message_search_text', content_rowid = 'rowid',
        tokenize = 'unicode61 remove_diacritics 2'
    );

    CREATE TRIGGER message_search_on_delete
    AFTER DELETE ON messages WHEN substr(OLD.content, 1, 1) = x'01'
    BEGIN
        INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', OLD.rowid, CAST(substr(OLD.content, 2) AS TEXT));
    END;

    -- The index is keyed by rowid: a message keeps its rowid.
    CREATE TRIGGER messages_rowid_never_changes
    BEFORE UPDATE OF rowid ON messages
    BEGIN
        SELECT RAISE(ABORT, 'a message''s rowid never changes');
    END;

    INSERT INTO message_search (message_search) VALUES ('rebuild');
    """
}
