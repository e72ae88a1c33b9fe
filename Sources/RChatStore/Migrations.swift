import RChatSQL

/// One schema step. Steps are applied in order, each in its own transaction together with
/// the `user_version` it reaches, so a crash leaves the file at a whole version.
/// A released step is never edited: change the schema by appending a step.
struct Migration: Sendable {
    let version: Int
    let sql: String
    /// The step makes a table again (SQLite cannot change a column in place): it runs with
    /// foreign keys off, so that dropping the old table does not cascade to the rows that
    /// refer to it, and every reference is checked before it commits.
    var rebuildsTables = false
    /// What SQL cannot do, run after `sql` in the same transaction (data turned into a new form).
    var convert: (@Sendable (Database) throws -> Void)? = nil
}

enum Migrations {
    /// Every step this code knows, oldest first; versions are 1, 2, 3, … without gaps.
    static let all: [Migration] = [
        Migration(version: 1, sql: SchemaV1.sql),
        Migration(version: 2, sql: SchemaV2.sql),
        Migration(version: 3, sql: """
            -- The account's secrets at rest: 1 = secret_key, previous_secret_key,
            -- mailbox_seed and previous_mailbox_seed hold boxes sealed with the device's
            -- sealing key (a copy of the database without its device directory and machine
            -- yields none of them); 0 = rows written before this step, in the clear, sealed
            -- the next time the account is opened with its device.
            ALTER TABLE account ADD COLUMN secrets_sealed INTEGER NOT NULL DEFAULT 0 CHECK (secrets_sealed IN (0, 1));
            """),
        Migration(version: 4, sql: """
            -- Contacts found by account key through an index: taking in a message request
            -- costs the same with ten thousand strangers stored as with none.
            CREATE INDEX contacts_by_account_key ON contacts (account_key);
            """),
        Migration(version: 5, sql: """
            -- Could-not-read notices acted on, by the BLAKE2b-256 of the sealed notice: each
            -- is acted on once, whichever session it arrives in (a relay delivering it again
            -- gets nothing). Kept with the contact: notices are rare, one per lost state.
            CREATE TABLE notices_read (
                contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
                digest BLOB NOT NULL CHECK (length(digest) = 32),
                read_at INTEGER NOT NULL,
                PRIMARY KEY (contact_id, digest)
            ) STRICT, WITHOUT ROWID;
            -- Recovery that must survive a restart: this side started over and owes the
            -- contact its (maybe empty) notice until the relay takes one; the contact started
            -- over and its notice has not been read yet.
            ALTER TABLE contacts ADD COLUMN started_over_notice_owed INTEGER NOT NULL DEFAULT 0
                CHECK (started_over_notice_owed IN (0, 1));
            ALTER TABLE contacts ADD COLUMN peer_started_over INTEGER NOT NULL DEFAULT 0
                CHECK (peer_started_over IN (0, 1));
            -- The session an unreadable copy came in: a copy sent again in another session
            -- that is unreadable too is told again (NULL: recorded before this step).
            ALTER TABLE undecryptable ADD COLUMN session BLOB CHECK (session IS NULL OR length(session) = 16);
            """),
        Migration(version: 6, sql: SchemaV6.sql, rebuildsTables: true),
        Migration(version: 7, sql: SchemaDrafts.sql),
        Migration(version: 8, sql: SchemaSearch.sql),
        Migration(version: 9, sql: SchemaAttachments.sql),
        Migration(version: 10, sql: SchemaTimers.sql),
        Migration(version: 11, sql: """
            -- A file being sent that waits, and for what, as the engine last found it
            -- (`UploadWait`): 'room', the relay refused part of it for the recipient's
            -- quota; 'contact', no session to send it in until the contact is back. NULL:
            -- it moves, or nothing of it is left to go.
            ALTER TABLE attachments ADD COLUMN waiting TEXT CHECK (waiting IS NULL OR waiting IN ('room', 'contact'));
            """),
        Migration(version: 12, sql: """
            -- Who put a queued message on its way (SendPolicy.Origin): the user, writing it or
            -- pressing Resend, when the conversation's next position was this (a row before it,
            -- "Sam is using a new device…", was there when they asked, so it goes to that
            -- device); NULL: rChat itself (an automatic resend). A message queued before this
            -- step counts as asked for when it was written, unless it was resent automatically.
            ALTER TABLE outbox ADD COLUMN asked_at_position INTEGER;
            UPDATE outbox SET asked_at_position =
                (SELECT m.position FROM messages m WHERE m.rowid = outbox.message_rowid AND m.auto_resent_at IS NULL);
            """),
        Migration(version: 13, sql: """
            -- The counter of the timer change in force (TimerPolicy.Change: a logical clock, the
            -- greatest seen + 1, ties broken by timer_set_by). 0: set before counters, or never
            -- set; such a change is ordered by its id, and every later one comes after it.
            ALTER TABLE contacts ADD COLUMN timer_counter INTEGER NOT NULL DEFAULT 0
                CHECK (timer_counter BETWEEN 0 AND 4611686018427387904);
            """),
        Migration(version: 14, sql: SchemaChunkRanges.sql, rebuildsTables: true, convert: SchemaChunkRanges.convert),
        Migration(version: 15, sql: SchemaConversations.sql, rebuildsTables: true),
        Migration(version: 16, sql: SchemaGroups.sql),
        Migration(version: 17, sql: SchemaGroupFiles.sql),
        Migration(version: 18, sql: SchemaGroupWaiting.sql),
        Migration(version: 19, sql: SchemaGroupHeads.sql, rebuildsTables: true),
        Migration(version: 20, sql: SchemaRotatedKeys.sql),
        Migration(version: 21, sql: SchemaReplies.sql),
        Migration(version: 22, sql: SchemaActions.sql),
        Migration(version: 23, sql: SchemaEdits.sql),
    ]

    /// The reason a step failed, on one line.
    private static func oneLine(_ error: Error) -> String {
        let text = (error as? DatabaseError)?.message ?? String(describing: error)
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// Marks the file as rChat's (`PRAGMA application_id`), so another program's SQLite
    /// file is refused instead of being migrated.
    static let applicationID: Int32 = 0x7243_6874  // "rCht"

    /// Brings `db` from its `user_version` up to the last step. A step that fails is undone
    /// whole, and said in one line (`StoreError.migrationFailed`): the file stays at the last
    /// whole version. An unreadable file is reported as such.
    static func apply(_ steps: [Migration], to db: Database, path: String) throws {
        precondition(steps.enumerated().allSatisfy { $0.offset + 1 == $0.element.version },
                     "migration versions must be 1, 2, 3, … in order")
        let current = try db.userVersion
        for step in steps where step.version > current {
            // Outside a transaction: SQLite ignores the pragma inside one.
            if step.rebuildsTables { try db.execute("PRAGMA foreign_keys = OFF") }
            do {
                try db.transaction {
                    try db.executeScript(step.sql)
                    try step.convert?(db)
                    if step.rebuildsTables, let broken = try db.queryOne("PRAGMA foreign_key_check") {
                        throw StoreError.malformedValue(
                            table: try broken.string(at: 0), column: "rowid",
                            detail: "row \(try broken.optionalInt64(at: 1).map(String.init) ?? "?") refers to a row that does not exist")
                    }
                    try db.setUserVersion(step.version)
                }
            } catch {
                if step.rebuildsTables { try? db.execute("PRAGMA foreign_keys = ON") }
                if let error = error as? DatabaseError, error.isUnreadableFile { throw error }
                throw StoreError.migrationFailed(path: path, version: step.version, left: step.version - 1,
                                                 reason: Self.oneLine(error))
            }
            if step.rebuildsTables { try db.execute("PRAGMA foreign_keys = ON") }
        }
    }
}
