/// The schema step that keeps drafts: one row per conversation with something typed and
/// not sent, written by the view. A draft goes with its conversation: the row is removed
/// when the contact is marked deleted (`rchat delete`, `/delete`) and, should a contact
/// row ever be removed, by the foreign key. The step only adds (a table and a trigger), so
/// it can take any place after the others.
enum SchemaDrafts {
    static let sql = """
    -- text: what was typed (UTF-8, 1 byte to 1 MiB); cursor: the cursor's place in
    -- characters (grapheme clusters) from the start; updated_at: unix seconds.
    CREATE TABLE drafts (
        contact_id INTEGER PRIMARY KEY REFERENCES contacts(id) ON DELETE CASCADE,
        text TEXT NOT NULL CHECK (length(CAST(text AS BLOB)) BETWEEN 1 AND 1048576),
        cursor INTEGER NOT NULL CHECK (cursor >= 0),
        updated_at INTEGER NOT NULL
    ) STRICT;

    CREATE TRIGGER drafts_go_with_their_conversation
    AFTER UPDATE OF deleted ON contacts WHEN NEW.deleted = 1
    BEGIN
        DELETE FROM drafts WHERE contact_id = NEW.id;
    END;
    """
}
