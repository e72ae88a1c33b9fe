/// The schema step for attachments: one row per attachment message, beside its message
/// (the message's content carries kind, name, size, hash and key). Only adds a table and
/// a trigger, so it can take any place after the others.
enum SchemaAttachments {
    static let sql = """
    -- chunk_count: the file's chunks (FileStream); chunks: a bitmap (ChunkSet): for a file
    -- being sent, the chunks the relay took; for one being received, those stored here
    -- (written and fsynced before the row commits). item_taken: the relay took the message
    -- item itself (outgoing). stream_header: the 24-byte secretstream header (outgoing: from
    -- the start; incoming: from chunk 0). stream_state: the secretstream state (secret, as
    -- the key in the message is): outgoing, as it was after the header, from which every
    -- chunk is made again; incoming, after the next_chunk chunks decrypted in order so far.
    -- hash_state: incoming, BLAKE2b's state over those chunks' plaintext. file: the
    -- plaintext in the account home, relative to it (outgoing: the sent copy, from the
    -- start; incoming: once whole and its hash checked). work_file: incoming, the plaintext
    -- so far (chunks that came ahead of their turn wait, encrypted, in work_file + '.ahead').
    -- delivered_owed: incoming, whole: its Delivered receipt is owed until the relay takes it.
    CREATE TABLE attachments (
        message_rowid INTEGER PRIMARY KEY REFERENCES messages(rowid) ON DELETE CASCADE,
        direction TEXT NOT NULL CHECK (direction IN ('out', 'in')),
        chunk_count INTEGER NOT NULL CHECK (chunk_count >= 1),
        chunks BLOB NOT NULL CHECK (length(chunks) = (chunk_count + 7) / 8),
        item_taken INTEGER NOT NULL DEFAULT 0 CHECK (item_taken IN (0, 1)),
        stream_header BLOB CHECK (stream_header IS NULL OR length(stream_header) = 24),
        stream_state BLOB,
        next_chunk INTEGER NOT NULL DEFAULT 0 CHECK (next_chunk BETWEEN 0 AND chunk_count),
        hash_state BLOB,
        state TEXT NOT NULL DEFAULT 'moving' CHECK (state IN ('moving', 'complete', 'discarded')),
        file TEXT,
        work_file TEXT,
        reason TEXT,
        delivered_owed INTEGER NOT NULL DEFAULT 0 CHECK (delivered_owed IN (0, 1)),
        CHECK (state <> 'complete' OR file IS NOT NULL),
        CHECK (state <> 'discarded' OR reason IS NOT NULL),
        CHECK (direction = 'in' OR (file IS NOT NULL AND stream_header IS NOT NULL AND stream_state IS NOT NULL)),
        CHECK (direction = 'out' OR work_file IS NOT NULL)
    ) STRICT;
    CREATE INDEX attachments_delivered_owed ON attachments (message_rowid) WHERE delivered_owed = 1;

    CREATE TRIGGER attachments_go_with_their_message
    AFTER DELETE ON messages
    BEGIN
        DELETE FROM attachments WHERE message_rowid = OLD.rowid;
    END;
    """
}
