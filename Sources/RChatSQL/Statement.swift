import CSQLite

/// A prepared statement. Owned by one `Database`, which caches it by SQL text and resets it
/// after every use, so a cached statement is never left mid-step.
final class Statement {
    let sql: String
    private var handle: OpaquePointer?
    private let connection: OpaquePointer

    init(connection: OpaquePointer, sql: String, persistent: Bool) throws {
        self.sql = sql
        self.connection = connection
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        // The tail points into the C string, so it is read while that string is alive.
        let (rc, trailingText) = sql.withCString { text -> (Int32, Bool) in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v3(connection, text, -1, flags, &statement, &tail)
            return (rc, tail.map { !Self.isBlank($0) } ?? false)
        }
        guard rc == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw Self.error(connection, rc, sql)
        }
        // A second statement in the text would be silently skipped: refuse it instead.
        if trailingText {
            sqlite3_finalize(statement)
            throw DatabaseError(extendedCode: ResultCode.misuse,
                                message: "more than one statement given; use executeScript", sql: sql)
        }
        guard let statement else {
            throw DatabaseError(extendedCode: ResultCode.misuse, message: "no statement in the SQL text", sql: sql)
        }
        handle = statement
    }

    deinit { finalize() }

    func finalize() {
        if let handle { sqlite3_finalize(handle) }
        handle = nil
    }

    /// Binds, steps to the end and collects every row; always resets, even on error.
    func run(_ args: [SQLValue]) throws -> [Row] {
        guard let handle else {
            throw DatabaseError(extendedCode: ResultCode.misuse, message: "statement used after the database was closed", sql: sql)
        }
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        try bind(args, to: handle)
        var rows: [Row] = []
        var columns: [String]?
        while true {
            let rc = sqlite3_step(handle)
            if rc == SQLITE_DONE { return rows }
            guard rc == SQLITE_ROW else { throw Self.error(connection, rc, sql) }
            let names = columns ?? Self.columnNames(handle)
            columns = names
            rows.append(Row(columns: names, values: (0..<Int32(names.count)).map { Self.value(handle, $0) }, sql: sql))
        }
    }

    private func bind(_ args: [SQLValue], to handle: OpaquePointer) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard expected == args.count else {
            throw DatabaseError(extendedCode: ResultCode.range,
                                message: "statement takes \(expected) arguments, \(args.count) given", sql: sql)
        }
        for (offset, value) in args.enumerated() {
            let i = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(handle, i)
            case .integer(let v):
                rc = sqlite3_bind_int64(handle, i, v)
            case .real(let v):
                rc = sqlite3_bind_double(handle, i, v)
            case .text(let v):
                // Explicit length, so text with NUL characters survives whole; the string's
                // own UTF-8 storage, copied once (by SQLite).
                var text = v
                rc = text.withUTF8 { utf8 in
                    // A NULL pointer would bind SQL NULL, not the empty string.
                    let base = UnsafeRawPointer(utf8.baseAddress) ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                    return sqlite3_bind_text64(handle, i, base.assumingMemoryBound(to: CChar.self), UInt64(utf8.count),
                                               rchat_sqlite_transient(), UInt8(SQLITE_UTF8))
                }
            case .blob(let v):
                if v.isEmpty {
                    // A NULL pointer would bind SQL NULL, not an empty blob.
                    rc = sqlite3_bind_zeroblob(handle, i, 0)
                } else {
                    rc = v.withUnsafeBytes { raw in
                        sqlite3_bind_blob64(handle, i, raw.baseAddress, UInt64(raw.count), rchat_sqlite_transient())
                    }
                }
            }
            guard rc == SQLITE_OK else { throw Self.error(connection, rc, sql) }
        }
    }

    private static func columnNames(_ handle: OpaquePointer) -> [String] {
        (0..<sqlite3_column_count(handle)).map { i in
            sqlite3_column_name(handle, i).map { String(cString: $0) } ?? "column\(i)"
        }
    }

    private static func value(_ handle: OpaquePointer, _ i: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, i))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, i))
        case SQLITE_TEXT:
            // Pointer first, then length: the order SQLite documents.
            guard let text = sqlite3_column_text(handle, i) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, i))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let blob = sqlite3_column_blob(handle, i) else { return .blob([]) }
            let count = Int(sqlite3_column_bytes(handle, i))
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default:
            return .null
        }
    }

    private static func isBlank(_ text: UnsafePointer<CChar>) -> Bool {
        var p = text
        while p.pointee != 0 {
            switch UInt8(bitPattern: p.pointee) {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: ";"): p += 1
            default: return false
            }
        }
        return true
    }

    static func error(_ connection: OpaquePointer?, _ rc: Int32, _ sql: String?) -> DatabaseError {
        // With extended codes on, the connection holds the precise code; `rc` may be primary.
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? rc
        let code = (extended & 0xff) == (rc & 0xff) ? extended : rc
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(rc))
        return DatabaseError(extendedCode: code, message: message, sql: sql)
    }
}
