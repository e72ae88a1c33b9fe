/// Schema step 23: edits and delete for everyone (issue 31).
///
/// - `messages.current_text`: a text message's (or reply's) text in force after its edits
///   (`EditPolicy`), NULL while it has none. Its content stays as it was written (the
///   original, shown in `i` with each edit, every edit an action row of its own); search
///   finds the current text only: the view `message_search_text` reads `current_text` where
///   there is one, and the store gives the index the old text back and the new one as an
///   edit takes effect (`setCurrentText`).
/// - A message deleted for everyone keeps its row (its place, statuses and receipts), its
///   content overwritten with the one byte 5 (`MessageContent.unsent`), the only change a
///   message's content may make: `messages_content_never_changes` lets that one through.
///   Its index entry, edits, reactions, attachment record and alerts go with its text.
enum SchemaEdits {
    static let sql = """
    ALTER TABLE messages ADD COLUMN current_text TEXT;
    DROP TRIGGER messages_content_never_changes;
    CREATE TRIGGER messages_content_never_changes
    BEFORE UPDATE OF content ON messages WHEN NEW.content IS NOT x'05'
    BEGIN
        SELECT RAISE(ABORT, 'a message''s content never changes');
    END;
    DROP TRIGGER message_search_on_delete;
    DROP VIEW message_search_text;
    CREATE VIEW message_search_text (rowid, text) AS
        SELECT rowid, coalesce(current_text, CASE substr(content, 1, 1) WHEN x'04' THEN CAST(substr(content, 18) AS TEXT)
                                                                           ELSE CAST(substr(content, 2) AS TEXT) END)
        FROM messages WHERE substr(content, 1, 1) IN (x'01', x'04');
    CREATE TRIGGER message_search_on_delete
    AFTER DELETE ON messages WHEN substr(OLD.content, 1, 1) IN (x'01', x'04')
    BEGIN
        INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', OLD.rowid,
            coalesce(OLD.current_text, CASE substr(OLD.content, 1, 1) WHEN x'04' THEN CAST(substr(OLD.content, 18) AS TEXT)
                                                                      ELSE CAST(substr(OLD.content, 2) AS TEXT) END));
    END;
    """
}
