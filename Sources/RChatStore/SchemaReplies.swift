/// Schema step 21: replies are searched as text messages are (issue 31).
///
/// A reply's content is kind 4, the quoted id (16 bytes), then its UTF-8 text: the search
/// view reads that text from byte 18 as it reads a text message's from byte 2, and the
/// delete trigger gives the index the same text back. The quote is never indexed: search
/// finds what a person wrote in that message. Replies a later rChat wrote before this step
/// (kept byte for byte as needing a newer version) are indexed by the step itself.
enum SchemaReplies {
    static let sql = """
    DROP TRIGGER message_search_on_delete;
    DROP VIEW message_search_text;
    CREATE VIEW message_search_text (rowid, text) AS
        SELECT rowid, CASE substr(content, 1, 1) WHEN x'04' THEN CAST(substr(content, 18) AS TEXT)
                                                  ELSE CAST(substr(content, 2) AS TEXT) END
        FROM messages WHERE substr(content, 1, 1) IN (x'01', x'04');
    CREATE TRIGGER message_search_on_delete
    AFTER DELETE ON messages WHEN substr(OLD.content, 1, 1) IN (x'01', x'04')
    BEGIN
        INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', OLD.rowid,
            CASE substr(OLD.content, 1, 1) WHEN x'04' THEN CAST(substr(OLD.content, 18) AS TEXT)
                                           ELSE CAST(substr(OLD.content, 2) AS TEXT) END);
    END;
    INSERT INTO message_search (rowid, text)
        SELECT rowid, CAST(substr(content, 18) AS TEXT) FROM messages
        WHERE substr(content, 1, 1) = x'04';
    """
}
