import RChatCore
import RChatSQL

/// Receipts arrive a thousand ids to a frame, relay acknowledgements hundreds at a time: the
/// same compare-and-raise as `raiseStatus`, done 64 messages to a statement. One statement
/// per id cost the sender more than the receiver spent storing the messages.
extension StoreAccess {
    /// Applies a receipt's `event` to each of `ids` (outgoing messages to `contact`), through
    /// `StatusLattice.raise`, writing a timeline entry for each status that changed and
    /// taking every message found off the outbox. Unknown ids are skipped. Returns one change
    /// per message found, in the order found.
    public func raiseStatuses(contact: ContactID, ids: [MessageID], event: StatusEvent, at now: Int64) throws -> [StatusChange] {
        try atomically {
            let changes = try raise(ids, lookup: StatusBatchSQL.lookupByID, prefix: [.integer(contact.rawValue)], value: { .blob($0.bytes) },
                                    event: event, at: now)
            // A receipt proved them arrived: a row offering Resend for them may have nothing left to offer.
            try withdrawSettledResendOffers(contact: contact, touched: changes.filter { $0.changed && $0.current.isFinal }.map(\.id))
            return changes
        }
    }

    /// The same for messages known by row (the relay's acknowledgements: Sent).
    public func raiseStatuses(messages: [MessageRowID], event: StatusEvent, at now: Int64) throws -> [StatusChange] {
        try raise(messages, lookup: StatusBatchSQL.lookupByRow, prefix: [], value: { .integer($0.rawValue) }, event: event, at: now)
    }

    private func raise<Key>(_ keys: [Key], lookup: String, prefix: [SQLValue], value: (Key) -> SQLValue,
                            event: StatusEvent, at now: Int64) throws -> [StatusChange] {
        guard !keys.isEmpty else { return [] }
        return try atomically {
            var changes: [StatusChange] = []
            changes.reserveCapacity(keys.count)
            var seen: Set<MessageRowID> = []  // listed twice: raised once
            try BatchSQL.forEachList(keys) { part in
                for row in try database.query(lookup, prefix + BatchSQL.padded(part.map(value))) {
                    let message = try row.messageRowID("rowid")
                    guard seen.insert(message).inserted else { continue }
                    guard let current = try row.status("status", table: "message_status") else {
                        throw StoreError.malformedValue(table: "message_status", column: "status", detail: "NULL")
                    }
                    changes.append(StatusChange(message: message, id: try row.messageID("id", table: "messages"), previous: current,
                                                current: StatusLattice.raise(current, event)))
                }
            }
            try write(changes.filter(\.changed), at: now)
            // Proof it arrived, or the relay took it: nothing of these is left to send.
            try BatchSQL.forEachList(changes) { part in
                try database.execute(StatusBatchSQL.removeFromOutbox, BatchSQL.padded(part.map { .integer($0.message.rawValue) }))
            }
            return changes
        }
    }

    /// Writes changed statuses: one UPDATE per (from, to) pair and 64 rows, each a
    /// compare-and-set on the status read; then the timeline.
    private func write(_ changes: [StatusChange], at now: Int64) throws {
        var groups: [StatusStep: [StatusChange]] = [:]
        for change in changes { groups[StatusStep(from: change.previous, to: change.current), default: []].append(change) }
        for (step, group) in groups {
            try BatchSQL.forEachList(group) { part in
                let args = [.text(step.to.rawValue), .text(step.from.rawValue)] + BatchSQL.padded(part.map { .integer($0.message.rawValue) })
                try database.execute(StatusBatchSQL.update, args)
                guard database.changes == part.count else { throw StoreError.unknownMessage(part.first!.message) }
            }
        }
        var rest = changes[...]
        while !rest.isEmpty {
            let n = BatchSQL.chunk(rest.count)
            let part = rest.prefix(n)
            rest = rest.dropFirst(n)
            var log: [SQLValue] = []
            log.reserveCapacity(3 * n)
            for change in part { log.append(contentsOf: [.integer(change.message.rawValue), .text(change.current.rawValue), .integer(now)]) }
            try database.execute(StatusBatchSQL.appendLog[n]!, log)
        }
    }
}

/// A change from one status to another: the updates are grouped by it (a hashable pair,
/// not an array made per change).
private struct StatusStep: Hashable {
    let from: MessageStatus
    let to: MessageStatus
}

private enum StatusBatchSQL {
    // By id: the (contact_id, id) index holds the rowid, so the wide message row is not read.
    static let lookupByID = """
        SELECT m.rowid AS rowid, m.id AS id, s.status AS status
        FROM messages AS m JOIN message_status AS s ON s.message_rowid = m.rowid
        WHERE m.contact_id = ? AND m.id IN
        """ + BatchSQL.inList
    static let lookupByRow = """
        SELECT s.message_rowid AS rowid, m.id AS id, s.status AS status
        FROM message_status AS s JOIN messages AS m ON m.rowid = s.message_rowid
        WHERE s.message_rowid IN
        """ + BatchSQL.inList
    static let update = "UPDATE message_status SET status = ? WHERE status = ? AND message_rowid IN " + BatchSQL.inList
    static let removeFromOutbox = "DELETE FROM outbox WHERE message_rowid IN " + BatchSQL.inList
    static let appendLog = BatchSQL.inserts("INSERT INTO status_log (message_rowid, status, at)", row: "(?, ?, ?)")
}
