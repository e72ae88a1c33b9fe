/// The schema step for attachments: one row per attachment message, beside its message
/// (the message's content carries kind, name, size, hash and key). Only adds a table and
/// a trigger, so it can take any place after the others.
enum SchemaAttachments {
    static let sql = """
    -- chunk_count: the file's chunks (FileStream); chunks: a bitmap (ChunkSet): for a file
    -- being sent, the chunks the relay took; for one being received, those stored here
    -- (written and fsynced before the row commits). item_taken: the relay took the message
    -- item itself (outgoing). stream_header: the 24-byte secretstream header, from chunk 0
    -- (incoming). file: the plaintext in the account home, relative to it (outgoing: the
    -- sent copy, from the start; incoming: once whole and its hash checked). work_file: the
    -- encrypted file (outgoing) or the partial one (incoming), relative to the home.
    -- delivered_owed: incoming, whole: its Delivered receipt is owed until the relay takes it.
    CREATE TABLE attachments (
        message_rowid INTEGER PRIMARY KEY REFERENCES messages(rowid) ON DELETE CASCADE,
        direction TEXT NOT NULL CHECK (direction IN ('out', 'in')),
        chunk_count INTEGER NOT NULL CHECK (chunk_count >= 1),
        chunks BLOB NOT NULL CHECK (length(chunks) = (chunk_count + 7) / 8),
        item_taken INTEGER NOT NULL DEFAULT 0 CHECK (item_taken IN (0, 1)),
        stream_header BLOB CHECK (stream_header IS NULL OR length(stream_header) = 24),
        state TEXT NOT NULL DEFAULT 'moving' CHECK (state IN ('moving', 'complete', 'discarded')),
        file TEXT,
        work_file TEXT NOT NULL,
        reason TEXT,
        delivered_owed INTEGER NOT NULL DEFAULT 0 CHECK (delivered_owed IN (0, 1)),
        CHECK (state <> 'complete' OR file IS NOT NULL),
        CHECK (state <> 'discarded' OR reason IS NOT NULL),
        CHECK (direction = 'in' OR file IS NOT NULL)
    ) STRICT;
    CREATE INDEX attachments_delivered_owed ON attachments (message_rowid) WHERE delivered_owed = 1;

    CREATE TRIGGER attachments_go_with_their_message
    AFTER DELETE ON messages
    BEGIN
        DELETE FROM attachments WHERE message_rowid = OLD.rowid;
    END;
    """
}
