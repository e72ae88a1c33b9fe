import Foundation
import Glibc
import RChatCore
import RChatSQL

/// The client's database: `<home>/rchat.db`.
///
/// Opening checks before it writes: a file that is not a database, is damaged, belongs to
/// another program or to a newer rChat throws a `StoreError` and is left byte for byte as
/// it was. Then WAL with `synchronous=FULL` (a commit survives a crash or power loss),
/// foreign keys on, and the migrations up to `Store.schemaVersion`.
///
/// `@unchecked Sendable`, like `Database`: its owner (the engine) uses it from one thread
/// at a time and may move it between threads.
public final class Store: StoreAccess, @unchecked Sendable {
    public static let fileName = "rchat.db"
    /// The schema version this code writes and reads.
    public static var schemaVersion: Int { Migrations.all.count }

    public let path: String
    public let database: Database

    /// Opens `<home>/rchat.db`. The caller made `home` (mode 0700).
    public convenience init(home: String) throws {
        try self.init(path: URL(fileURLWithPath: home).appendingPathComponent(Self.fileName).path)
    }

    public convenience init(path: String) throws {
        try self.init(path: path, migrations: Migrations.all)
    }

    init(path: String, migrations: [Migration]) throws {
        self.path = path
        do {
            database = try Database(path: path, fileMode: 0o600)
        } catch let error as DatabaseError where error.isUnreadableFile {
            throw StoreError.unreadable(path: path, reason: Self.reason(error, path))
        } catch let error as DatabaseError where error.code == ResultCode.cantOpen {
            throw StoreError.cannotOpen(path: path, reason: Self.reason(error, path))
        }
        do {
            try Self.prepare(database, path: path, migrations: migrations)
        } catch {
            // Refused: closed without a checkpoint, so the file and its log stay as they were.
            database.leaveAsItIs()
            database.close()
            if let error = error as? DatabaseError, error.isUnreadableFile {
                throw StoreError.unreadable(path: path, reason: Self.reason(error, path))
            }
            throw error
        }
        Self.restrictToOwner(path)
    }

    public func close() { database.close() }

    /// SQLite's `data_version` of this connection: it moves when another connection (another
    /// process) commits, never for this connection's own commits.
    public func otherWritersVersion() throws -> Int64 {
        try database.queryOne("PRAGMA data_version")?.int64("data_version") ?? 0
    }

    /// Runs `body` in one BEGIN IMMEDIATE transaction: everything in it commits together,
    /// or nothing does if it throws. Transactions do not nest.
    public func transaction<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try database.transaction(.immediate) { try body(StoreTransaction(database: database)) }
    }

    /// The same, committed without waiting for the disk: it is in the WAL (a killed process
    /// loses nothing of it) but durable against power loss only once a `WALSync` of this
    /// store reports a sync requested after it. Act on nothing of it before then.
    /// `FULL` is set again afterwards, or this throws: every other transaction must wait.
    public func transactionSyncedLater<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try database.execute("PRAGMA synchronous = NORMAL")
        let result: T
        do {
            result = try transaction(body)
        } catch {
            try? database.execute("PRAGMA synchronous = FULL")
            throw error
        }
        try database.execute("PRAGMA synchronous = FULL")
        return result
    }

    /// When the first stored message's disappearing timer runs out (wall clock), if any.
    public func earliestExpiry() throws -> Int64? {
        try database.queryOne("SELECT min(expires_at) FROM messages WHERE expires_at IS NOT NULL")?.optionalInt64(at: 0)
    }

    /// Rows this connection changed since it opened (`Database.totalChanges`).
    public var changesWritten: Int64 { database.totalChanges }

    /// Deletes the messages whose disappearing timer ran out at `now` (`deleteExpired`), with
    /// secure delete on, so that the space they leave is zeroed; the search index is merged
    /// afterwards, so no word of theirs stays in its older segments; then the log is
    /// checkpointed and truncated, so no frame written when they arrived (or before secure
    /// delete zeroed their pages) stays in `rchat.db-wal` while the engine keeps it open.
    public func deletingExpired(at now: Int64) throws -> [ExpiredMessage] {
        // One indexed probe when nothing is due: every command and the engine's second call this.
        guard try database.queryOne("SELECT 1 FROM messages WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT 1",
                                    [.integer(now)]) != nil else { return [] }
        let previous = try database.queryOne("PRAGMA secure_delete")?.int64(at: 0) ?? 0
        try database.execute("PRAGMA secure_delete = ON")
        defer { try? database.execute("PRAGMA secure_delete = \(previous == 2 ? "FAST" : String(previous))") }
        let expired = try transaction { tx in try tx.deleteExpired(at: now) }
        if !expired.isEmpty {
            try database.execute("INSERT INTO message_search (message_search) VALUES ('optimize')")
            try truncateLog()
        }
        return expired
    }

    /// Runs `body` in a transaction that overwrites secrets kept in the clear, so that no
    /// copy of them stays in the files: SQLite's secure delete is on for it (the space the
    /// old values leave is zeroed), then VACUUM rewrites the file without the free space
    /// earlier versions may have left, and a checkpoint truncates the WAL. VACUUM needs the
    /// file to itself: when another connection has it open it is skipped, as the new values
    /// are committed already. (Secure delete is set back afterwards.)
    public func overwritingSecrets(_ body: (StoreTransaction) throws -> Void) throws {
        let previous = try database.queryOne("PRAGMA secure_delete")?.int64(at: 0) ?? 0
        try database.execute("PRAGMA secure_delete = ON")
        defer { try? database.execute("PRAGMA secure_delete = \(previous == 2 ? "FAST" : String(previous))") }
        try transaction(body)
        try? database.executeScript("VACUUM")
        try truncateLog()
    }

    /// Copies the whole log into the database and truncates it to nothing. A reader in the
    /// middle of a transaction on another connection can keep it from finishing (SQLite then
    /// waits out the busy timeout and reports busy): the next pass truncates it.
    public func truncateLog() throws {
        _ = try database.query("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    // MARK: opening

    private static func prepare(_ db: Database, path: String, migrations: [Migration]) throws {
        // Statement journals (a savepoint, a multi-row statement that may fail halfway) in
        // memory: as files they cost two writes per page a batch touched. First, as it writes
        // nothing: set once the checks below have used temporary storage, it closes that and
        // makes the connection parse the whole schema again at its next statement.
        try db.execute("PRAGMA temp_store = MEMORY")
        // Reads only, until the file is known to be ours and readable.
        let version = try db.userVersion
        let applicationID = try db.queryOne("PRAGMA application_id")?.int64(at: 0) ?? 0
        let tables = try db.queryOne("SELECT count(*) FROM sqlite_master")?.int64(at: 0) ?? 0
        let isEmpty = tables == 0 && version == 0
        if !isEmpty && applicationID != Int64(Migrations.applicationID) {
            throw StoreError.unreadable(path: path, reason: "it is a SQLite database of another program")
        }
        if version > migrations.count {
            throw StoreError.newerSchema(path: path, found: version, known: migrations.count)
        }
        let journalMode = try db.queryOne("PRAGMA journal_mode")?.string(at: 0) ?? ""
        if !isEmpty && (version < migrations.count || journalMode != "wal") {
            // About to write to an existing file: make sure it is sound first.
            try check(db, path: path, table: nil)
        } else if !isEmpty {
            // Every command reads these and most write them: a damaged page in them (which
            // SQLite may read as a NULL, or as no row at all) is found before anything is
            // written. Each is a few rows per contact: microseconds.
            // (A file kept at an earlier version, by a test, lacks the later ones.)
            let present = Set(try db.query("SELECT name FROM sqlite_master WHERE type = 'table'").map { try $0.string(at: 0) })
            for table in vitalTables where present.contains(table) { try check(db, path: path, table: table) }
        }

        let mode = try db.queryOne("PRAGMA journal_mode = WAL")?.string(at: 0) ?? ""
        guard mode == "wal" else { throw StoreError.walUnavailable(path: path, journalMode: mode) }
        try db.execute("PRAGMA synchronous = FULL")
        try db.execute("PRAGMA foreign_keys = ON")
        try Migrations.apply(migrations, to: db, path: path)
    }

    /// The small tables checked at every opening.
    static let vitalTables = ["account", "settings", "contacts", "conversations", "conversation_members", "session_state", "outbox"]

    /// `PRAGMA quick_check` of one table and its indexes, or of the whole file.
    private static func check(_ db: Database, path: String, table: String?) throws {
        let verdict = try db.query(table.map { "PRAGMA quick_check(\($0))" } ?? "PRAGMA quick_check").map { try $0.string(at: 0) }
        if verdict != ["ok"] {
            throw StoreError.unreadable(path: path, reason: "damaged: " + (verdict.first(where: { !$0.hasPrefix("***") }) ?? "quick_check failed"))
        }
    }

    /// Checks every page of the file (`PRAGMA quick_check`: about 0.2 s per 300,000
    /// messages), writing nothing: what the engine does before its first write of a run.
    public func checkWholeFile() throws {
        do {
            try Self.check(database, path: path, table: nil)
        } catch let error as DatabaseError where error.isUnreadableFile {
            throw StoreError.unreadable(path: path, reason: Self.reason(error, path))
        }
    }

    private static func reason(_ error: DatabaseError, _ path: String) -> String {
        let prefix = path + ": "
        return error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
    }

    /// 0600 for the database and its WAL files, also when they existed with wider modes
    /// (copied in, or made by an older build).
    private static func restrictToOwner(_ path: String) {
        for file in [path, path + "-wal", path + "-shm"] {
            _ = chmod(file, 0o600)
        }
    }
}
