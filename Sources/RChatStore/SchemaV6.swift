/// Schema step 6: a message carries content, not text. `messages.text` becomes
/// `messages.content`, a BLOB in `MessageContent`'s byte layout (RChatCore): one kind byte,
/// then its fields. A text message's content is the byte 1 followed by its UTF-8 text, so
/// every stored message moves as `x'01' || text`.
///
/// SQLite cannot change a column's type in place: the table is made again under a new name,
/// filled, and renamed over the old one, with foreign keys off for the step
/// (`Migration.rebuildsTables`), so that dropping the old table does not cascade to the
/// statuses, outbox rows and alerts that refer to its rows. Their references are checked
/// before the step commits. Rows keep their rowids, so every reference still holds.
enum SchemaV6 {
    static let sql = """
    CREATE TABLE messages_v6 (
        rowid INTEGER PRIMARY KEY,
        contact_id INTEGER NOT NULL REFERENCES contacts(id),
        id BLOB NOT NULL CHECK (length(id) = 16),
        direction TEXT NOT NULL CHECK (direction IN ('out', 'in')),
        -- MessageContent's encoding: kind 1 text, 2 attachment, 3 control item; at most a
        -- kind byte and 64 KiB of text.
        content BLOB NOT NULL CHECK (length(content) BETWEEN 1 AND 65537 AND substr(content, 1, 1) BETWEEN x'01' AND x'03'),
        resent INTEGER NOT NULL DEFAULT 0 CHECK (resent IN (0, 1)),
        auto_resent_at INTEGER,
        created_at INTEGER NOT NULL,
        received_at INTEGER,
        read_at INTEGER,
        seq INTEGER,
        keys_fingerprint BLOB,
        position INTEGER NOT NULL,
        read_owed INTEGER NOT NULL DEFAULT 0 CHECK (read_owed IN (0, 1)),
        UNIQUE (contact_id, id)
    ) STRICT;

    INSERT INTO messages_v6 (rowid, contact_id, id, direction, content, resent, auto_resent_at, created_at,
                             received_at, read_at, seq, keys_fingerprint, position, read_owed)
    SELECT rowid, contact_id, id, direction, CAST(x'01' || text AS BLOB), resent, auto_resent_at, created_at,
           received_at, read_at, seq, keys_fingerprint, position, read_owed
    FROM messages ORDER BY rowid;

    DROP TABLE messages;
    ALTER TABLE messages_v6 RENAME TO messages;
    CREATE UNIQUE INDEX messages_by_conversation ON messages (contact_id, position);
    CREATE INDEX messages_unread ON messages (contact_id) WHERE direction = 'in' AND read_at IS NULL;
    CREATE INDEX messages_read_owed ON messages (contact_id, position) WHERE read_owed = 1;

    -- A message is sent again with its id and the same content, and the receiver keeps each
    -- id once: its content never changes once stored.
    CREATE TRIGGER messages_content_never_changes
    BEFORE UPDATE OF content ON messages
    BEGIN
        SELECT RAISE(ABORT, 'a message''s content never changes');
    END;
    """
}
