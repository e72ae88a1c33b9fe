/// Schema step 17: files in groups, and a group's own mute and block (issue 30).
///
/// - `attachment_sends`: what the relay took of a file being sent, per delivery (message,
///   member) — its item and its chunks (ranges, as `attachments.chunks`), and what it waits
///   for. A group's file goes to each member over their own channel, so each delivery moves
///   on its own; a direct conversation's file has its one delivery. The outgoing rows of
///   `attachments` keep what every delivery shares (the sent copy, the stream's header and
///   starting state, the chunk count); their `chunks`, `item_taken` and `waiting` are no
///   longer used (emptied here). Rows for a message's deliveries are written with its
///   attachment row (`insertOutgoingAttachment`).
/// - `messages_in_groups_by_id`: a group message found by its id alone. A chunk, a file's
///   progress, its refusal and its Delivered receipt name a message by id only, on the
///   pairwise channel of its author or of a member it went to (docs/PROTOCOL.md,
///   "Attachments"): the direct conversation's index finds one there, this one in a group.
/// - `groups.muted`, `groups.blocked`: as a contact's (`rchat mute GROUP`, `rchat block
///   GROUP`): muted, its messages raise no alert; blocked, nothing of it is stored, shown or
///   sent (its log still taken, so a later unblock knows the roster).
enum SchemaGroupFiles {
    static let sql = """
    CREATE TABLE attachment_sends (
        message_rowid INTEGER NOT NULL REFERENCES messages(rowid) ON DELETE CASCADE,
        member_id INTEGER NOT NULL REFERENCES contacts(id),
        chunks BLOB NOT NULL DEFAULT x'',
        item_taken INTEGER NOT NULL DEFAULT 0 CHECK (item_taken IN (0, 1)),
        waiting TEXT CHECK (waiting IS NULL OR waiting IN ('room', 'contact')),
        PRIMARY KEY (message_rowid, member_id)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO attachment_sends (message_rowid, member_id, chunks, item_taken, waiting)
    SELECT a.message_rowid, s.member_id, a.chunks, a.item_taken, a.waiting
    FROM attachments AS a JOIN message_status AS s ON s.message_rowid = a.message_rowid
    WHERE a.direction = 'out' ORDER BY a.message_rowid, s.member_id;
    UPDATE attachments SET chunks = x'', item_taken = 0, waiting = NULL WHERE direction = 'out';
    CREATE TRIGGER attachment_sends_go_with_their_message
    AFTER DELETE ON messages
    BEGIN
        DELETE FROM attachment_sends WHERE message_rowid = OLD.rowid;
    END;

    CREATE INDEX messages_in_groups_by_id ON messages (id) WHERE conversation_id < 0;

    ALTER TABLE groups ADD COLUMN muted INTEGER NOT NULL DEFAULT 0 CHECK (muted IN (0, 1));
    ALTER TABLE groups ADD COLUMN blocked INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1));
    """
}
