import CSQLite
import Glibc

/// One SQLite connection.
///
/// `@unchecked Sendable`: the connection is opened FULLMUTEX, but the statement cache and
/// the transaction state are plain properties. The owner (the engine, the relay) uses it
/// from one thread at a time and may hand it to another thread; nothing more.
public final class Database: @unchecked Sendable {
    public enum TransactionKind: String, Sendable {
        case deferred = "BEGIN DEFERRED"
        case immediate = "BEGIN IMMEDIATE"
        case exclusive = "BEGIN EXCLUSIVE"
    }

    public let path: String
    private var connection: OpaquePointer?
    private var cache: [String: Statement] = [:]
    private var savepointDepth = 0
    private var leavingAsItIs = false

    /// Opens (and, unless `readOnly`, creates) the database at `path`.
    ///
    /// - A new file is created with `fileMode` before SQLite opens it; SQLite gives its
    ///   `-wal`/`-shm`/`-journal` files the same mode.
    /// - A locked database is waited for up to `busyTimeoutMilliseconds`, so two processes
    ///   on one file queue rather than fail at once.
    /// - The file is read (its schema) before anything can write to it: a file that is not
    ///   a database, or is damaged, throws here and is left exactly as it was.
    public init(path: String, readOnly: Bool = false, fileMode: UInt32 = 0o600, busyTimeoutMilliseconds: Int32 = 5000) throws {
        self.path = path
        if !readOnly { Self.createIfMissing(path, mode: fileMode) }

        var handle: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        // Never through a symlink at the database's name (SQLite refuses any link in the
        // path with NOFOLLOW, so the directory's own links are resolved first).
        let rc = sqlite3_open_v2(Self.directoryResolved(path), &handle, access | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW, nil)
        guard rc == SQLITE_OK, let handle else {
            let error = Statement.error(handle, rc, nil)
            sqlite3_close_v2(handle)
            throw DatabaseError(extendedCode: error.extendedCode, message: "\(path): \(error.message)")
        }
        connection = handle
        sqlite3_extended_result_codes(handle, 1)
        // SQLite's own busy handler sleeps 1, 2, 5 … 100 ms between tries: a commit that needs
        // half a millisecond could wait a hundred. Retry every 200 µs up to the same limit.
        let tries = Int(busyTimeoutMilliseconds) * 5
        sqlite3_busy_handler(handle, { limit, count in
            guard Int(count) < Int(bitPattern: limit) else { return 0 }
            usleep(200)
            return 1
        }, UnsafeMutableRawPointer(bitPattern: max(tries, 1)))
        do {
            // Reading the schema parses the header and page 1: "not a database" and most
            // damage show up here, before any pragma or migration could write.
            _ = try query("SELECT count(*) FROM sqlite_master")
        } catch let error as DatabaseError {
            leaveAsItIs()
            close()
            throw DatabaseError(extendedCode: error.extendedCode, message: "\(path): \(error.message)", sql: error.sql)
        }
    }

    deinit { close() }

    /// Finalizes cached statements and closes the connection. Later calls throw.
    public func close() {
        var log = stat()
        if leavingAsItIs, let connection, stat(path + "-wal", &log) == 0, log.st_size > 0 {
            _ = rchat_sqlite_no_checkpoint_on_close(connection)
        }
        for statement in cache.values { statement.finalize() }
        cache.removeAll()
        if let connection { sqlite3_close_v2(connection) }
        connection = nil
    }

    public var isOpen: Bool { connection != nil }

    /// From now on, closing this connection leaves the file and its write-ahead log byte for
    /// byte as they are: a log holding transactions is neither copied into a file found
    /// damaged (or one a caller refuses to use) nor deleted. (An empty log, which opening
    /// made, is removed as usual.) Called by itself when SQLite reports the file malformed
    /// or not a database.
    public func leaveAsItIs() { leavingAsItIs = true }

    // MARK: statements

    /// Runs one statement, discarding any rows.
    public func execute(_ sql: String, _ args: [SQLValue] = []) throws {
        _ = try noticingDamage { try statement(sql).run(args) }
    }

    /// Runs one statement and returns all its rows.
    public func query(_ sql: String, _ args: [SQLValue] = []) throws -> [Row] {
        try noticingDamage { try statement(sql).run(args) }
    }

    private func noticingDamage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.isUnreadableFile {
            leaveAsItIs()
            throw error
        }
    }

    /// The first row, or nil when there is none.
    public func queryOne(_ sql: String, _ args: [SQLValue] = []) throws -> Row? {
        try query(sql, args).first
    }

    /// Several statements without arguments (schema scripts); not cached.
    public func executeScript(_ sql: String) throws {
        let handle = try open()
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        if rc & 0xff == SQLITE_CORRUPT || rc & 0xff == SQLITE_NOTADB { leaveAsItIs() }
        guard rc == SQLITE_OK else {
            let base = Statement.error(handle, rc, sql)
            throw DatabaseError(extendedCode: base.extendedCode, message: message.map { String(cString: $0) } ?? base.message, sql: sql)
        }
    }

    /// Number of prepared statements kept for reuse (one per distinct SQL text).
    public var cachedStatementCount: Int { cache.count }

    private func statement(_ sql: String) throws -> Statement {
        if let cached = cache[sql] { return cached }
        let statement = try Statement(connection: try open(), sql: sql, persistent: true)
        cache[sql] = statement
        return statement
    }

    private func open() throws -> OpaquePointer {
        guard let connection else {
            throw DatabaseError(extendedCode: ResultCode.misuse, message: "the database \(path) is closed")
        }
        return connection
    }

    // MARK: transactions

    /// Whether a transaction is open on this connection.
    public var isInTransaction: Bool {
        guard let connection else { return false }
        return sqlite3_get_autocommit(connection) == 0
    }

    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws (the
    /// error is rethrown). IMMEDIATE by default, so a read-then-write body takes the write
    /// lock first and cannot fail half-way on a lock upgrade. Nesting throws (use `savepoint`).
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        guard !isInTransaction else {
            throw DatabaseError(extendedCode: ResultCode.misuse, message: "a transaction is already open; transactions do not nest")
        }
        try execute(kind.rawValue)
        let result: T
        do {
            result = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollbackQuietly()
            throw error
        }
        return result
    }

    /// Runs `body` inside a SAVEPOINT: on throw, only its own changes are undone and the
    /// enclosing transaction carries on. Outside a transaction it behaves like a DEFERRED one.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        let name = "rchat_savepoint_\(savepointDepth)"
        try execute("SAVEPOINT \(name)")
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let result: T
        do {
            result = try body()
        } catch {
            // ROLLBACK TO keeps the savepoint open; RELEASE then closes it.
            if isInTransaction {
                try? execute("ROLLBACK TO \(name)")
                try? execute("RELEASE \(name)")
            }
            throw error
        }
        try execute("RELEASE \(name)")
        return result
    }

    private func rollbackQuietly() {
        // SQLite may already have rolled back by itself (e.g. after SQLITE_FULL).
        if isInTransaction { try? execute("ROLLBACK") }
    }

    // MARK: connection facts

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 { connection.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { connection.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// Rows changed by every INSERT, UPDATE and DELETE on this connection since it opened
    /// (`sqlite3_total_changes64`): a cheap way to tell whether this connection wrote since.
    public var totalChanges: Int64 { connection.map { sqlite3_total_changes64($0) } ?? 0 }

    /// `PRAGMA user_version`: the schema version the application wrote.
    public var userVersion: Int {
        get throws { try queryOne("PRAGMA user_version")?.int(at: 0) ?? 0 }
    }

    public func setUserVersion(_ version: Int) throws {
        // Pragmas take no bound arguments; an Int32 printed in decimal is safe to splice.
        try execute("PRAGMA user_version = \(Int32(clamping: version))")
    }

    // MARK: files

    /// `path` with its directory's symlinks resolved and its last component as it is.
    private static func directoryResolved(_ path: String) -> String {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return path }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(directory, nil) else { return path }
        defer { free(resolved) }
        return "\(String(cString: resolved))/\(name)"
    }

    /// Creates an empty file with `mode` (an empty file is a valid empty database), so the
    /// database never exists, even briefly, with wider permissions than asked for.
    private static func createIfMissing(_ path: String, mode: UInt32) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
        // Already there, or not creatable: SQLite opens it or reports why it cannot.
        if fd >= 0 { _ = Glibc.close(fd) }
    }
}
