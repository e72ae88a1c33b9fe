import RChatCore
import RChatSQL

/// The schema step that keeps an attachment's chunks as ranges (`ChunkRanges.encoded`)
/// instead of a bitmap sized by the chunks the file claims: a contact declaring a file of
/// 2^40 bytes made a 2 MiB bitmap, rewritten with every chunk. The table is made again
/// (SQLite cannot drop the bitmap's CHECK), then each bitmap is turned into its ranges.
enum SchemaChunkRanges {
    static let sql = """
    -- chunks: the chunks done, as ranges (ChunkRanges): each a big-endian u32 start and end
    -- (half-open), sorted and merged; empty when none is. Otherwise as in version 9 and 11.
    CREATE TABLE attachments_v14 (
        message_rowid INTEGER PRIMARY KEY REFERENCES messages(rowid) ON DELETE CASCADE,
        direction TEXT NOT NULL CHECK (direction IN ('out', 'in')),
        chunk_count INTEGER NOT NULL CHECK (chunk_count >= 1),
        chunks BLOB NOT NULL,
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
        waiting TEXT CHECK (waiting IS NULL OR waiting IN ('room', 'contact')),
        CHECK (state <> 'complete' OR file IS NOT NULL),
        CHECK (state <> 'discarded' OR reason IS NOT NULL),
        CHECK (direction = 'in' OR (file IS NOT NULL AND stream_header IS NOT NULL AND stream_state IS NOT NULL)),
        CHECK (direction = 'out' OR work_file IS NOT NULL)
    ) STRICT;
    INSERT INTO attachments_v14 (message_rowid, direction, chunk_count, chunks, item_taken, stream_header, stream_state,
                                 next_chunk, hash_state, state, file, work_file, reason, delivered_owed, waiting)
    SELECT message_rowid, direction, chunk_count, chunks, item_taken, stream_header, stream_state,
           next_chunk, hash_state, state, file, work_file, reason, delivered_owed, waiting
    FROM attachments ORDER BY message_rowid;
    DROP TRIGGER attachments_go_with_their_message;
    DROP TABLE attachments;
    ALTER TABLE attachments_v14 RENAME TO attachments;
    CREATE INDEX attachments_delivered_owed ON attachments (message_rowid) WHERE delivered_owed = 1;
    CREATE TRIGGER attachments_go_with_their_message
    AFTER DELETE ON messages
    BEGIN
        DELETE FROM attachments WHERE message_rowid = OLD.rowid;
    END;
    """

    /// After `sql`, in its transaction: each row's bitmap becomes its ranges. A bitmap that
    /// does not fit its chunk count stops the step (the file stays at version 13).
    static func convert(_ db: Database) throws {
        for row in try db.query("SELECT message_rowid, chunk_count, chunks FROM attachments") {
            let count = Int(try row.int64("chunk_count"))
            guard let set = ChunkSet(count: count, bitmap: try row.blob("chunks")) else {
                throw StoreError.malformedValue(table: "attachments", column: "chunks", detail: "a bitmap that does not fit \(count) chunks")
            }
            try db.execute("UPDATE attachments SET chunks = ? WHERE message_rowid = ?",
                           [.blob(set.encoded), .integer(try row.int64("message_rowid"))])
        }
    }
}
