/// Schema step 18: a group's messages that came before this side held the group (issue 30,
/// recovery per member).
///
/// A member who reinstalled holds no group; what the others resend to them, or write to the
/// group meanwhile, may come before an admin's log hands the group to them again
/// (`Groups.handOn`). Such a message cannot be checked against a roster yet, so it is kept
/// here, as it came (the group message's body: group id, timer, content), until a log makes
/// the group held here: then each from an author the roster holds is stored in the group's
/// conversation (its Delivered owed from that commit), the rest dropped. Bounded: at most
/// `GroupWaiting.perAuthor` per author, none older than the relay's 72 hours.
enum SchemaGroupWaiting {
    static let sql = """
    CREATE TABLE group_messages_waiting (
        author_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        message_id BLOB NOT NULL CHECK (length(message_id) = 16),
        group_id BLOB NOT NULL CHECK (length(group_id) = 32),
        body BLOB NOT NULL CHECK (length(body) BETWEEN 36 AND 65573),
        seq INTEGER,
        sent_at INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        PRIMARY KEY (author_id, message_id)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX group_messages_waiting_by_group ON group_messages_waiting (group_id, received_at);
    """
}
