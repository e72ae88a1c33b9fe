/// Schema step 15: conversations apart from contacts, and a delivery per member
/// (docs/DESIGN.md §15, docs/ARCHITECTURE.md "The store").
///
/// A contact is a person with pinned keys and a pairwise channel (keys, session_state,
/// notices_read, undecryptable, recovery flags and requests stay on `contacts`). A
/// conversation is what messages, rows, drafts, alerts, timers and expired ids belong to:
/// `direct` (one other member: the contact whose id it has — every existing id keeps its
/// value, so open views, drafts and alerts are where they were) or `group` (a negative id,
/// `-1, -2, …`, which no contact's ever is). A trigger on `contacts` gives each new contact
/// its direct conversation, so no code path can make one without the other.
///
/// Messages carry their conversation and their author: NULL is this side (direction 'out'),
/// else the contact who wrote it. An outgoing message has one delivery per member it was
/// written to: a row in `message_status` (status, resend facts), its timeline in
/// `status_log`, its place in the send queue and the session it went in in `outbox` — each
/// keyed by (message, member); the names stay those of the tables they were, and what it shows is
/// `DeliverySummary` over the deliveries to current members. Delivered receipts are owed
/// by a mark per (conversation, author), in `conversation_members`.
///
/// The tables that change are made again (SQLite cannot change a column's reference in
/// place), with foreign keys off for the step and every reference checked before it
/// commits (`Migration.rebuildsTables`); rows keep their rowids and ids, so attachments,
/// search entries and alerts still point at their messages. The search index's view and the
/// triggers on `messages` are made again after it, and the index rebuilt (`SchemaSearch`).
enum SchemaConversations {
    static let sql = """
    -- Made again below, over the new tables.
    DROP VIEW message_search_text;
    DROP TRIGGER drafts_go_with_their_conversation;

    -- timer_*: the conversation's disappearing timer, as contacts held it (steps 10 and 13).
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('direct', 'group')),
        created_at INTEGER NOT NULL,
        timer_seconds INTEGER NOT NULL DEFAULT 0 CHECK (timer_seconds >= 0),
        timer_set_by BLOB CHECK (timer_set_by IS NULL OR length(timer_set_by) = 16),
        timer_counter INTEGER NOT NULL DEFAULT 0 CHECK (timer_counter BETWEEN 0 AND 4611686018427387904),
        CHECK ((kind = 'direct') = (id > 0))
    ) STRICT;
    INSERT INTO conversations (id, kind, created_at, timer_seconds, timer_set_by, timer_counter)
    SELECT id, 'direct', added_at, timer_seconds, timer_set_by, timer_counter FROM contacts ORDER BY id;

    -- The other members (this side is a member of every conversation it holds, not listed).
    -- role, state: what a group needs ('admin' may add and remove; 'left', 'removed': no
    -- longer written to, their deliveries no longer count in what a message shows).
    -- delivered_receipted_through, last_incoming_position: the Delivered receipt mark of this
    -- author in this conversation, as contacts held it (schema 1).
    CREATE TABLE conversation_members (
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'admin')),
        state TEXT NOT NULL DEFAULT 'current' CHECK (state IN ('current', 'left', 'removed')),
        delivered_receipted_through INTEGER NOT NULL DEFAULT 0,
        last_incoming_position INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (conversation_id, contact_id)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX conversation_members_by_contact ON conversation_members (contact_id);
    INSERT INTO conversation_members (conversation_id, contact_id, delivered_receipted_through, last_incoming_position)
    SELECT id, id, delivered_receipted_through, last_incoming_position FROM contacts ORDER BY id;

    CREATE TRIGGER contacts_have_their_conversation
    AFTER INSERT ON contacts
    BEGIN
        INSERT INTO conversations (id, kind, created_at) VALUES (NEW.id, 'direct', NEW.added_at);
        INSERT INTO conversation_members (conversation_id, contact_id) VALUES (NEW.id, NEW.id);
    END;
    -- A contact row removed (a request merged into a contact) takes its direct conversation.
    CREATE TRIGGER contacts_take_their_conversation
    AFTER DELETE ON contacts
    BEGIN
        DELETE FROM conversations WHERE id = OLD.id AND kind = 'direct';
    END;

    -- author_id: NULL for this side's messages, the contact who wrote it otherwise. The
    -- resend facts (resent, auto_resent_at, keys_fingerprint) are the deliveries' now.
    -- content: MessageContent's encoding, any kind byte — what a later version wrote is
    -- kept whole (MessageContent.newer) — and at most a kind byte and 64 KiB.
    CREATE TABLE messages_v15 (
        rowid INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        author_id INTEGER REFERENCES contacts(id),
        id BLOB NOT NULL CHECK (length(id) = 16),
        direction TEXT NOT NULL CHECK (direction IN ('out', 'in')),
        content BLOB NOT NULL CHECK (length(content) BETWEEN 1 AND 65537),
        created_at INTEGER NOT NULL,
        received_at INTEGER,
        read_at INTEGER,
        seq INTEGER,
        position INTEGER NOT NULL,
        read_owed INTEGER NOT NULL DEFAULT 0 CHECK (read_owed IN (0, 1)),
        expires_after INTEGER CHECK (expires_after IS NULL OR expires_after > 0),
        expires_at INTEGER,
        CHECK ((direction = 'out') = (author_id IS NULL)),
        UNIQUE (conversation_id, id)
    ) STRICT;
    INSERT INTO messages_v15 (rowid, conversation_id, author_id, id, direction, content, created_at, received_at, read_at, seq,
                              position, read_owed, expires_after, expires_at)
    SELECT rowid, contact_id, CASE direction WHEN 'in' THEN contact_id END, id, direction, content, created_at, received_at,
           read_at, seq, position, read_owed, expires_after, expires_at
    FROM messages ORDER BY rowid;

    -- A row per delivery: an outgoing message's delivery to one member (a row per message
    -- before), keyed by (message, member). Its status, and
    -- the facts recovery decides by — sent again (by hand or automatically), when
    -- automatically, and the member's pinned keys when it was sent ("keys unchanged").
    -- Spelled out with OR, as message_status was (a long IN list costs a temporary table).
    CREATE TABLE message_status_v15 (
        message_rowid INTEGER NOT NULL REFERENCES messages(rowid) ON DELETE CASCADE,
        member_id INTEGER NOT NULL REFERENCES contacts(id),
        status TEXT NOT NULL CHECK (status = 'Sending' OR status = 'Sent' OR status = 'Delivered' OR status = 'Read'
                                    OR status = 'Not delivered' OR status = 'Not confirmed' OR status = 'Failed to send'),
        resent INTEGER NOT NULL DEFAULT 0 CHECK (resent IN (0, 1)),
        auto_resent_at INTEGER,
        keys_fingerprint BLOB,
        PRIMARY KEY (message_rowid, member_id)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO message_status_v15 (message_rowid, member_id, status, resent, auto_resent_at, keys_fingerprint)
    SELECT s.message_rowid, m.contact_id, s.status, m.resent, m.auto_resent_at, m.keys_fingerprint
    FROM message_status AS s JOIN messages AS m ON m.rowid = s.message_rowid ORDER BY s.message_rowid;
    -- The 50-in-24-hours limit counts a member's automatic resends.
    
    -- Every status a delivery reached, with its time, in order (rowid).
    CREATE TABLE status_log_v15 (
        message_rowid INTEGER NOT NULL REFERENCES messages(rowid) ON DELETE CASCADE,
        member_id INTEGER NOT NULL REFERENCES contacts(id),
        status TEXT NOT NULL CHECK (status = 'Sending' OR status = 'Sent' OR status = 'Delivered' OR status = 'Read'
                                   OR status = 'Not delivered' OR status = 'Not confirmed' OR status = 'Failed to send'),
        at INTEGER NOT NULL
    ) STRICT;
    INSERT INTO status_log_v15 (message_rowid, member_id, status, at)
    SELECT l.message_rowid, m.contact_id, l.status, l.at FROM status_log AS l JOIN messages AS m ON m.rowid = l.message_rowid
    ORDER BY l.rowid;
    
    -- The durable send queue: a row per delivery the relay has not yet taken.
    CREATE TABLE outbox_v15 (
        message_rowid INTEGER NOT NULL REFERENCES messages(rowid) ON DELETE CASCADE,
        member_id INTEGER NOT NULL REFERENCES contacts(id),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        sent_in_session BLOB,
        asked_at_position INTEGER,
        PRIMARY KEY (message_rowid, member_id)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO outbox_v15 (message_rowid, member_id, attempts, next_attempt_at, sent_in_session, asked_at_position)
    SELECT o.message_rowid, m.contact_id, o.attempts, o.next_attempt_at, o.sent_in_session, o.asked_at_position
    FROM outbox AS o JOIN messages AS m ON m.rowid = o.message_rowid ORDER BY o.message_rowid;

    -- member_id: the member whose pairwise channel the row is about (recovery rows), NULL
    -- for the whole conversation.
    CREATE TABLE system_rows_v15 (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        member_id INTEGER REFERENCES contacts(id),
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        action TEXT CHECK (action IN ('resend')),
        message_ids BLOB NOT NULL DEFAULT x'' CHECK (length(message_ids) % 16 = 0),
        created_at INTEGER NOT NULL,
        position INTEGER NOT NULL
    ) STRICT;
    INSERT INTO system_rows_v15 (id, conversation_id, member_id, kind, text, action, message_ids, created_at, position)
    SELECT id, contact_id, contact_id, kind, text, action, message_ids, created_at, position FROM system_rows ORDER BY id;

    CREATE TABLE alerts_v15 (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER REFERENCES conversations(id),
        message_rowid INTEGER REFERENCES messages(rowid) ON DELETE SET NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        notification_id INTEGER,
        UNIQUE (message_rowid, kind)
    ) STRICT;
    INSERT INTO alerts_v15 (id, conversation_id, message_rowid, kind, title, text, created_at, notification_id)
    SELECT id, contact_id, message_rowid, kind, title, text, created_at, notification_id FROM alerts ORDER BY id;

    CREATE TABLE drafts_v15 (
        conversation_id INTEGER PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        text TEXT NOT NULL CHECK (length(CAST(text AS BLOB)) BETWEEN 1 AND 1048576),
        cursor INTEGER NOT NULL CHECK (cursor >= 0),
        updated_at INTEGER NOT NULL
    ) STRICT;
    INSERT INTO drafts_v15 (conversation_id, text, cursor, updated_at) SELECT contact_id, text, cursor, updated_at FROM drafts;

    -- author_id: who wrote it (NULL: this side), whose receipt mark its place counts in.
    CREATE TABLE expired_messages_v15 (
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        author_id INTEGER REFERENCES contacts(id),
        id BLOB NOT NULL CHECK (length(id) = 16),
        position INTEGER NOT NULL,
        incoming INTEGER NOT NULL CHECK (incoming IN (0, 1)),
        read_owed INTEGER NOT NULL DEFAULT 0 CHECK (read_owed IN (0, 1)),
        CHECK ((incoming = 1) = (author_id IS NOT NULL)),
        PRIMARY KEY (conversation_id, id)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO expired_messages_v15 (conversation_id, author_id, id, position, incoming, read_owed)
    SELECT contact_id, CASE incoming WHEN 1 THEN contact_id END, id, position, incoming, read_owed FROM expired_messages;

    DROP TABLE message_status;
    DROP TABLE status_log;
    DROP TABLE outbox;
    DROP TABLE system_rows;
    DROP TABLE alerts;
    DROP TABLE drafts;
    DROP TABLE expired_messages;
    DROP TABLE messages;
    ALTER TABLE messages_v15 RENAME TO messages;
    ALTER TABLE message_status_v15 RENAME TO message_status;
    ALTER TABLE status_log_v15 RENAME TO status_log;
    ALTER TABLE outbox_v15 RENAME TO outbox;
    ALTER TABLE system_rows_v15 RENAME TO system_rows;
    ALTER TABLE alerts_v15 RENAME TO alerts;
    ALTER TABLE drafts_v15 RENAME TO drafts;
    ALTER TABLE expired_messages_v15 RENAME TO expired_messages;

    CREATE UNIQUE INDEX messages_by_conversation ON messages (conversation_id, position);
    CREATE INDEX messages_unread ON messages (conversation_id) WHERE direction = 'in' AND read_at IS NULL;
    CREATE INDEX messages_read_owed ON messages (conversation_id, position) WHERE read_owed = 1;
    CREATE INDEX messages_expiring ON messages (expires_at) WHERE expires_at IS NOT NULL;
    CREATE INDEX outbox_due ON outbox (next_attempt_at);
    CREATE INDEX outbox_by_member ON outbox (member_id);
    CREATE INDEX status_log_by_delivery ON status_log (message_rowid, member_id);
    -- The 50-in-24-hours limit counts a member's automatic resends.
    CREATE INDEX message_status_auto_resent ON message_status (member_id, auto_resent_at) WHERE auto_resent_at IS NOT NULL;
    CREATE UNIQUE INDEX system_rows_by_conversation ON system_rows (conversation_id, position);
    CREATE INDEX alerts_by_time ON alerts (created_at);
    CREATE INDEX expired_messages_by_position ON expired_messages (conversation_id, position);

    -- The receipt marks and the timer live with the conversation now.
    ALTER TABLE contacts DROP COLUMN delivered_receipted_through;
    ALTER TABLE contacts DROP COLUMN last_incoming_position;
    ALTER TABLE contacts DROP COLUMN timer_seconds;
    ALTER TABLE contacts DROP COLUMN timer_set_by;
    ALTER TABLE contacts DROP COLUMN timer_counter;

    -- As steps 1, 6, 7, 8 and 9 made them, over the new tables. Defence in depth behind
    -- StatusLattice, per delivery: even a raw UPDATE cannot lower a status a member proved.
    CREATE TRIGGER message_status_never_lowered
    BEFORE UPDATE OF status ON message_status
    WHEN (OLD.status = 'Delivered' AND NEW.status IS NOT 'Delivered' AND NEW.status IS NOT 'Read')
      OR (OLD.status = 'Read' AND NEW.status IS NOT 'Read')
    BEGIN
        SELECT RAISE(ABORT, 'a Delivered or Read status is never lowered');
    END;
    CREATE TRIGGER messages_content_never_changes
    BEFORE UPDATE OF content ON messages
    BEGIN
        SELECT RAISE(ABORT, 'a message''s content never changes');
    END;
    CREATE TRIGGER drafts_go_with_their_conversation
    AFTER UPDATE OF deleted ON contacts WHEN NEW.deleted = 1
    BEGIN
        DELETE FROM drafts WHERE conversation_id = NEW.id;
    END;
    CREATE VIEW message_search_text (rowid, text) AS
        SELECT rowid, CAST(substr(content, 2) AS TEXT) FROM messages WHERE substr(content, 1, 1) = x'01';
    CREATE TRIGGER message_search_on_delete
    AFTER DELETE ON messages WHEN substr(OLD.content, 1, 1) = x'01'
    BEGIN
        INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', OLD.rowid, CAST(substr(OLD.content, 2) AS TEXT));
    END;
    CREATE TRIGGER messages_rowid_never_changes
    BEFORE UPDATE OF rowid ON messages
    BEGIN
        SELECT RAISE(ABORT, 'a message''s rowid never changes');
    END;
    CREATE TRIGGER attachments_go_with_their_message
    AFTER DELETE ON messages
    BEGIN
        DELETE FROM attachments WHERE message_rowid = OLD.rowid;
    END;
    INSERT INTO message_search (message_search) VALUES ('rebuild');
    """
}
