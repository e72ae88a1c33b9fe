/// A failure reported by SQLite, with what it was running, so that one line says it all.
public struct DatabaseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_CONSTRAINT`, `SQLITE_BUSY`, …): see `ResultCode`.
    public let code: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, …); equals `code` when SQLite gives none.
    public let extendedCode: Int32
    /// SQLite's own message (`sqlite3_errmsg`) or ours for misuse.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    public init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.code = extendedCode & 0xff
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var line = "\(message) (SQLite \(code)"
        if extendedCode != code { line += "/\(extendedCode)" }
        line += ")"
        if let sql { line += " in: \(Self.oneLine(sql))" }
        return line
    }

    /// Whitespace and newlines collapsed, long statements cut, so the description stays one line.
    static func oneLine(_ sql: String, limit: Int = 160) -> String {
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
        let joined = words.joined(separator: " ")
        return joined.count > limit ? String(joined.prefix(limit)) + "…" : joined
    }

    public var isUniqueViolation: Bool { extendedCode == ResultCode.constraintUnique || extendedCode == ResultCode.constraintPrimaryKey }
    public var isForeignKeyViolation: Bool { extendedCode == ResultCode.constraintForeignKey }
    /// The file is not a database, or its structure is damaged.
    public var isUnreadableFile: Bool { code == ResultCode.notADatabase || code == ResultCode.corrupt }
}

/// SQLite's result codes that callers test for. The extended ones are composite C macros
/// Swift cannot import, so they are spelled out here (values from sqlite3.h, stable ABI).
public enum ResultCode {
    public static let ok: Int32 = 0
    public static let error: Int32 = 1
    public static let abort: Int32 = 4
    public static let busy: Int32 = 5
    public static let locked: Int32 = 6
    public static let readOnly: Int32 = 8
    public static let corrupt: Int32 = 11
    public static let full: Int32 = 13
    public static let cantOpen: Int32 = 14
    public static let constraint: Int32 = 19
    public static let mismatch: Int32 = 20
    public static let misuse: Int32 = 21
    public static let range: Int32 = 25
    public static let notADatabase: Int32 = 26

    public static let busySnapshot: Int32 = 517            // SQLITE_BUSY | 2<<8
    public static let constraintCheck: Int32 = 275         // SQLITE_CONSTRAINT | 1<<8
    public static let constraintForeignKey: Int32 = 787    // SQLITE_CONSTRAINT | 3<<8
    public static let constraintNotNull: Int32 = 1299      // SQLITE_CONSTRAINT | 5<<8
    public static let constraintPrimaryKey: Int32 = 1555   // SQLITE_CONSTRAINT | 6<<8
    public static let constraintTrigger: Int32 = 1811      // SQLITE_CONSTRAINT | 7<<8
    public static let constraintUnique: Int32 = 2067       // SQLITE_CONSTRAINT | 8<<8
}
