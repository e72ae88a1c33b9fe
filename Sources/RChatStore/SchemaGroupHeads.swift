/// Schema step 19: the heads of each group's log, and the heads each waiting group message
/// came with (issue 30: logs that compare themselves; docs/PROTOCOL.md "Groups on the wire").
///
/// - `groups.heads`: the heads of this side's log (`GroupLog.sortedHeads`, 32 bytes each,
///   at most 16), set with the roster they fold to. Empty for a group held before this step
///   until its log next changes: its messages carry no heads then, and nothing is compared.
/// - `group_messages_waiting.body`: a group message's body now carries its author's heads
///   after the timer (a u8 count, then the heads), so a message whose author holds changes
///   this side lacks waits for them. Rows kept before this step are given a count of 0 (no
///   heads: judged by the roster as before); the bound grows by the 16 heads.
enum SchemaGroupHeads {
    static let sql = """
    ALTER TABLE groups ADD COLUMN heads BLOB NOT NULL DEFAULT x''
        CHECK (length(heads) % 32 = 0 AND length(heads) <= 512);

    CREATE TABLE group_messages_waiting_19 (
        author_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        message_id BLOB NOT NULL CHECK (length(message_id) = 16),
        group_id BLOB NOT NULL CHECK (length(group_id) = 32),
        body BLOB NOT NULL CHECK (length(body) BETWEEN 37 AND 66086),
        seq INTEGER,
        sent_at INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        PRIMARY KEY (author_id, message_id)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO group_messages_waiting_19 (author_id, message_id, group_id, body, seq, sent_at, received_at)
        SELECT author_id, message_id, group_id, CAST(substr(body, 1, 36) || x'00' || substr(body, 37) AS BLOB), seq, sent_at, received_at
        FROM group_messages_waiting;
    DROP TABLE group_messages_waiting;
    ALTER TABLE group_messages_waiting_19 RENAME TO group_messages_waiting;
    CREATE INDEX group_messages_waiting_by_group ON group_messages_waiting (group_id, received_at);
    """
}
