import RChatSQL

/// Statements that carry many rows at once (the engine's batches): a statement per row
/// opens cursors and a statement journal each time, which cost more than the rows.
/// Sizes are fixed so that only a few statements are prepared and cached.
enum BatchSQL {
    /// Values in one IN list; rows in one multi-row INSERT at most.
    static let listSize = 64

    /// Rows for the next multi-row INSERT: 64, 16, 4 or 1.
    static func chunk(_ remaining: Int) -> Int {
        remaining >= 64 ? 64 : remaining >= 16 ? 16 : remaining >= 4 ? 4 : 1
    }

    /// `INSERT … VALUES` with `row` repeated for each chunk size.
    static func inserts(_ head: String, row: String) -> [Int: String] {
        Dictionary(uniqueKeysWithValues: [1, 4, 16, 64].map { ($0, head + " VALUES " + Array(repeating: row, count: $0).joined(separator: ", ")) })
    }

    /// `values` in parts of at most `listSize`, in order: one IN list each (`padded`).
    static func forEachList<C: Collection>(_ values: C, _ body: (C.SubSequence) throws -> Void) rethrows {
        var rest = values[...]
        while !rest.isEmpty {
            let part = rest.prefix(listSize)
            rest = rest.dropFirst(part.count)
            try body(part)
        }
    }

    /// "?, ?, …" for an IN list of `listSize`.
    static let inList = "(" + Array(repeating: "?", count: listSize).joined(separator: ", ") + ")"

    /// `values` (1…listSize of them) padded to `listSize` by repeating them: IN counts a
    /// value once, however often it is listed.
    static func padded(_ values: [SQLValue]) -> [SQLValue] {
        precondition(!values.isEmpty && values.count <= listSize)
        var out = values
        out.reserveCapacity(listSize)
        while out.count < listSize { out.append(values[out.count % values.count]) }
        return out
    }
}
