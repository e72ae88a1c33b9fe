/// The schema step for disappearing messages. Only adds columns and an index.
///
/// contacts.timer_seconds: the conversation's timer (0: off); timer_set_by: the id of the
/// control item that set it (NULL: never set). Changes are ordered by the counter of step 13
/// (`contacts.timer_counter`), then by this id (`TimerPolicy.replaces`).
/// messages.expires_after: the timer in force when the message was written, in seconds
/// (NULL: none); expires_at: when it is deleted, unix seconds, set when its clock starts
/// (own messages: when the relay took them; received ones: when first shown).
/// alerts.notification_id: the desktop notification's id, to close it when its message goes.
/// expired_messages: the ids of messages deleted when their time ran out (nothing else of
/// them), so that no copy of one (a resend, a relay's replay) is ever stored again; its place,
/// which no later message takes (a Delivered receipt is owed by place), and for one received
/// whether its Read receipt is still owed: receipts owed when it went still go.
enum SchemaTimers {
    static let sql = """
    ALTER TABLE contacts ADD COLUMN timer_seconds INTEGER NOT NULL DEFAULT 0 CHECK (timer_seconds >= 0);
    ALTER TABLE contacts ADD COLUMN timer_set_by BLOB CHECK (timer_set_by IS NULL OR length(timer_set_by) = 16);
    ALTER TABLE messages ADD COLUMN expires_after INTEGER CHECK (expires_after IS NULL OR expires_after > 0);
    ALTER TABLE messages ADD COLUMN expires_at INTEGER;
    CREATE INDEX messages_expiring ON messages (expires_at) WHERE expires_at IS NOT NULL;
    ALTER TABLE alerts ADD COLUMN notification_id INTEGER;
    CREATE TABLE expired_messages (
        contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        id BLOB NOT NULL CHECK (length(id) = 16),
        position INTEGER NOT NULL,
        incoming INTEGER NOT NULL CHECK (incoming IN (0, 1)),
        read_owed INTEGER NOT NULL DEFAULT 0 CHECK (read_owed IN (0, 1)),
        PRIMARY KEY (contact_id, id)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX expired_messages_by_position ON expired_messages (contact_id, position);
    """
}
