/// One result row: column names (shared by all rows of a result) and their values.
/// Typed accessors throw a `DatabaseError` (`SQLITE_MISMATCH`) instead of trapping, because
/// a damaged or foreign file must end in an error line, never a crash.
public struct Row: Sendable, CustomStringConvertible {
    public let columns: [String]
    public let values: [SQLValue]
    let sql: String

    init(columns: [String], values: [SQLValue], sql: String) {
        self.columns = columns
        self.values = values
        self.sql = sql
    }

    /// The value in the named column (exact name first, then SQLite's case-insensitive rule);
    /// nil if the result has no such column.
    public subscript(_ name: String) -> SQLValue? {
        index(of: name).map { values[$0] }
    }

    public subscript(_ index: Int) -> SQLValue { values[index] }

    public var description: String {
        zip(columns, values).map { "\($0)=\($1)" }.joined(separator: ", ")
    }

    // MARK: by column name

    public func value(_ name: String) throws -> SQLValue {
        guard let i = index(of: name) else {
            throw DatabaseError(extendedCode: ResultCode.range, message: "no column \(name) in the result", sql: sql)
        }
        return values[i]
    }

    public func int64(_ name: String) throws -> Int64 { try required(name, "INTEGER", Self.asInt64) }
    public func int(_ name: String) throws -> Int { Int(try int64(name)) }
    public func bool(_ name: String) throws -> Bool { try int64(name) != 0 }
    public func double(_ name: String) throws -> Double { try required(name, "REAL", Self.asDouble) }
    public func string(_ name: String) throws -> String { try required(name, "TEXT", Self.asString) }
    public func blob(_ name: String) throws -> [UInt8] { try required(name, "BLOB", Self.asBlob) }

    public func optionalInt64(_ name: String) throws -> Int64? { try optional(name, "INTEGER", Self.asInt64) }
    public func optionalDouble(_ name: String) throws -> Double? { try optional(name, "REAL", Self.asDouble) }
    public func optionalString(_ name: String) throws -> String? { try optional(name, "TEXT", Self.asString) }
    public func optionalBlob(_ name: String) throws -> [UInt8]? { try optional(name, "BLOB", Self.asBlob) }

    // MARK: by column index

    public func int64(at index: Int) throws -> Int64 { try required(at: index, "INTEGER", Self.asInt64) }
    public func int(at index: Int) throws -> Int { Int(try int64(at: index)) }
    public func bool(at index: Int) throws -> Bool { try int64(at: index) != 0 }
    public func double(at index: Int) throws -> Double { try required(at: index, "REAL", Self.asDouble) }
    public func string(at index: Int) throws -> String { try required(at: index, "TEXT", Self.asString) }
    public func blob(at index: Int) throws -> [UInt8] { try required(at: index, "BLOB", Self.asBlob) }

    public func optionalInt64(at index: Int) throws -> Int64? { try optional(at: index, "INTEGER", Self.asInt64) }
    public func optionalDouble(at index: Int) throws -> Double? { try optional(at: index, "REAL", Self.asDouble) }
    public func optionalString(at index: Int) throws -> String? { try optional(at: index, "TEXT", Self.asString) }
    public func optionalBlob(at index: Int) throws -> [UInt8]? { try optional(at: index, "BLOB", Self.asBlob) }

    // MARK: conversions — strict, except that an integer may be read as a real.

    private static func asInt64(_ v: SQLValue) -> Int64? { if case .integer(let x) = v { return x }; return nil }
    private static func asString(_ v: SQLValue) -> String? { if case .text(let x) = v { return x }; return nil }
    private static func asBlob(_ v: SQLValue) -> [UInt8]? { if case .blob(let x) = v { return x }; return nil }
    private static func asDouble(_ v: SQLValue) -> Double? {
        switch v {
        case .real(let x): return x
        case .integer(let x): return Double(x)
        default: return nil
        }
    }

    private func index(of name: String) -> Int? {
        if let i = columns.firstIndex(of: name) { return i }
        let lower = name.lowercased()
        return columns.firstIndex { $0.lowercased() == lower }
    }

    private func checkedIndex(_ index: Int) throws -> Int {
        guard values.indices.contains(index) else {
            throw DatabaseError(extendedCode: ResultCode.range, message: "no column at index \(index) (the result has \(values.count))", sql: sql)
        }
        return index
    }

    private func required<T>(_ name: String, _ type: String, _ convert: (SQLValue) -> T?) throws -> T {
        let v = try value(name)
        guard let x = convert(v) else { throw mismatch(name, v, type) }
        return x
    }

    private func optional<T>(_ name: String, _ type: String, _ convert: (SQLValue) -> T?) throws -> T? {
        let v = try value(name)
        if v == .null { return nil }
        guard let x = convert(v) else { throw mismatch(name, v, type) }
        return x
    }

    private func required<T>(at index: Int, _ type: String, _ convert: (SQLValue) -> T?) throws -> T {
        let v = values[try checkedIndex(index)]
        guard let x = convert(v) else { throw mismatch(columns[index], v, type) }
        return x
    }

    private func optional<T>(at index: Int, _ type: String, _ convert: (SQLValue) -> T?) throws -> T? {
        let v = values[try checkedIndex(index)]
        if v == .null { return nil }
        guard let x = convert(v) else { throw mismatch(columns[index], v, type) }
        return x
    }

    private func mismatch(_ column: String, _ value: SQLValue, _ expected: String) -> DatabaseError {
        DatabaseError(extendedCode: ResultCode.mismatch,
                      message: "column \(column) holds \(value.typeName), expected \(expected)", sql: sql)
    }
}
