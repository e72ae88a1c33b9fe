/// The first schema. Times are unix seconds; keys and ids are BLOBs. STRICT tables, so a
/// wrong type is refused by SQLite rather than stored.
enum SchemaV1 {
    static let sql = """
    PRAGMA application_id = \(Migrations.applicationID);

    -- This side's account: one row. The secret key is here because the account is
    -- portable (exported, sealed by a passphrase); the device key never is.
    CREATE TABLE account (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        name TEXT NOT NULL,
        relay_address TEXT NOT NULL,
        public_key BLOB NOT NULL,
        secret_key BLOB NOT NULL,
        invite_token BLOB NOT NULL,
        -- The mailbox key's seed: fixed at creation, so key rotation and restores keep the
        -- mailbox where relays hold messages.
        mailbox_seed BLOB NOT NULL,
        -- After `keys rotate`: the previous account key (still spoken to contacts who have
        -- not yet accepted the new one) and its signature over the new one.
        previous_secret_key BLOB,
        rotation_statement BLOB,
        -- The device this data belongs to, and a box sealed with that device's sealing key:
        -- data copied to another device directory or machine is recognised, not misread.
        device_key BLOB NOT NULL,
        device_seal BLOB NOT NULL,
        created_at INTEGER NOT NULL
    ) STRICT;

    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) STRICT;

    -- name_key is the name folded (NFC, lowercased) by the store: names are unique
    -- case-insensitively in every script, which COLLATE NOCASE (ASCII only) is not.
    -- Deleted contacts keep their row and their name.
    CREATE TABLE contacts (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        name_key TEXT NOT NULL UNIQUE,
        account_key BLOB NOT NULL,
        device_key BLOB NOT NULL,
        device_certificate BLOB NOT NULL,
        relay_address TEXT,
        invite_token BLOB,
        state TEXT NOT NULL DEFAULT 'ok' CHECK (state = 'ok' OR state = 'keys-dont-match' OR state = 'request'),
        blocked INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
        muted INTEGER NOT NULL DEFAULT 0 CHECK (muted IN (0, 1)),
        deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
        -- Whether this contact has accepted our current account key (after `keys rotate`).
        rotation_acknowledged INTEGER NOT NULL DEFAULT 1 CHECK (rotation_acknowledged IN (0, 1)),
        -- Delivered receipts: the relay has taken one for every incoming message up to this
        -- position; one is owed for every incoming message after it. A mark per contact,
        -- not a flag per message: storing a message writes nothing more for its receipt,
        -- and settling a frame of a thousand receipts is one row written.
        delivered_receipted_through INTEGER NOT NULL DEFAULT 0,
        -- The position of the latest incoming message (0: none), kept by the store's insert:
        -- whether receipts are owed is one comparison, with no index over incoming messages.
        last_incoming_position INTEGER NOT NULL DEFAULT 0,
        keys_changed_at INTEGER NOT NULL,
        added_at INTEGER NOT NULL
    ) STRICT;

    -- The receiver keeps each message once: UNIQUE (contact_id, id).
    -- position: its place in the conversation, shared with system_rows (Conversation.swift).
    -- An outgoing message's status is in message_status (below), not here.
    -- keys_fingerprint: the contact's pinned keys when sent ("keys unchanged since sent").
    CREATE TABLE messages (
        rowid INTEGER PRIMARY KEY,
        contact_id INTEGER NOT NULL REFERENCES contacts(id),
        id BLOB NOT NULL CHECK (length(id) = 16),
        direction TEXT NOT NULL CHECK (direction IN ('out', 'in')),
        text TEXT NOT NULL,
        resent INTEGER NOT NULL DEFAULT 0 CHECK (resent IN (0, 1)),
        auto_resent_at INTEGER,
        created_at INTEGER NOT NULL,
        received_at INTEGER,
        read_at INTEGER,
        seq INTEGER,
        keys_fingerprint BLOB,
        position INTEGER NOT NULL,
        -- A Read receipt owed to the sender, durable until the relay takes it: owed in the
        -- same transaction that marks the message shown. (Delivered receipts are owed by
        -- position: contacts.delivered_receipted_through.)
        read_owed INTEGER NOT NULL DEFAULT 0 CHECK (read_owed IN (0, 1)),
        UNIQUE (contact_id, id)
    ) STRICT;
    CREATE UNIQUE INDEX messages_by_conversation ON messages (contact_id, position);
    CREATE INDEX messages_unread ON messages (contact_id) WHERE direction = 'in' AND read_at IS NULL;
    CREATE INDEX messages_read_owed ON messages (contact_id, position) WHERE read_owed = 1;

    -- The status of each outgoing message (a row exactly when direction = 'out', written
    -- with it). Kept apart from the message's wide row: a receipt raises a thousand
    -- statuses at once, and rewriting each text with its status cost five times as much.
    -- Spelled out with OR: SQLite evaluates a long IN list through a temporary table on
    -- every write, which cost more than the rest of an insert.
    CREATE TABLE message_status (
        message_rowid INTEGER PRIMARY KEY REFERENCES messages(rowid) ON DELETE CASCADE,
        status TEXT NOT NULL CHECK (status = 'Sending' OR status = 'Sent' OR status = 'Delivered' OR status = 'Read'
                                    OR status = 'Not delivered' OR status = 'Not confirmed' OR status = 'Failed to send')
    ) STRICT;

    -- Defence in depth behind StatusLattice: even a raw UPDATE cannot lower a status the
    -- peer proved. Delivered may only become Read; Read stays Read.
    CREATE TRIGGER message_status_never_lowered
    BEFORE UPDATE OF status ON message_status
    WHEN (OLD.status = 'Delivered' AND NEW.status IS NOT 'Delivered' AND NEW.status IS NOT 'Read')
      OR (OLD.status = 'Read' AND NEW.status IS NOT 'Read')
    BEGIN
        SELECT RAISE(ABORT, 'a Delivered or Read status is never lowered');
    END;

    -- Every status an outgoing message reached, with its time, in order (rowid).
    CREATE TABLE status_log (
        message_rowid INTEGER NOT NULL REFERENCES messages(rowid) ON DELETE CASCADE,
        status TEXT NOT NULL CHECK (status = 'Sending' OR status = 'Sent' OR status = 'Delivered' OR status = 'Read'
                                   OR status = 'Not delivered' OR status = 'Not confirmed' OR status = 'Failed to send'),
        at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX status_log_by_message ON status_log (message_rowid);

    -- The durable send queue: a row per message the relay has not yet taken.
    CREATE TABLE outbox (
        message_rowid INTEGER PRIMARY KEY REFERENCES messages(rowid) ON DELETE CASCADE,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        sent_in_session BLOB
    ) STRICT;
    CREATE INDEX outbox_due ON outbox (next_attempt_at);

    -- Sealed per-conversation session state: opaque bytes to the store.
    CREATE TABLE session_state (
        contact_id INTEGER PRIMARY KEY REFERENCES contacts(id),
        sealed BLOB NOT NULL,
        updated_at INTEGER NOT NULL
    ) STRICT;

    -- Rows such as "Sam's phone couldn't read 1 message, so rChat sent it again."
    -- message_ids: the 16-byte ids concerned, concatenated.
    CREATE TABLE system_rows (
        id INTEGER PRIMARY KEY,
        contact_id INTEGER NOT NULL REFERENCES contacts(id),
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        action TEXT CHECK (action IN ('resend')),
        message_ids BLOB NOT NULL DEFAULT x'' CHECK (length(message_ids) % 16 = 0),
        created_at INTEGER NOT NULL,
        position INTEGER NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX system_rows_by_conversation ON system_rows (contact_id, position);

    -- Every alert raised; UNIQUE (message_rowid, kind): never twice for one message.
    CREATE TABLE alerts (
        id INTEGER PRIMARY KEY,
        contact_id INTEGER REFERENCES contacts(id),
        message_rowid INTEGER REFERENCES messages(rowid) ON DELETE SET NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (message_rowid, kind)
    ) STRICT;
    CREATE INDEX alerts_by_time ON alerts (created_at);

    -- Message ids this side could not read, for the could-not-read notice.
    CREATE TABLE undecryptable (
        contact_id INTEGER NOT NULL REFERENCES contacts(id),
        id BLOB NOT NULL CHECK (length(id) = 16),
        received_at INTEGER NOT NULL,
        notified INTEGER NOT NULL DEFAULT 0 CHECK (notified IN (0, 1)),
        PRIMARY KEY (contact_id, id)
    ) STRICT, WITHOUT ROWID;
    """
}
