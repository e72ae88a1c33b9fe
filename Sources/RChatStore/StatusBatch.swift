import RChatCore
import RChatSQL

/// Receipts arrive a thousand ids to a frame, relay acknowledgements hundreds at a time: the
/// same compare-and-raise as `raiseDelivery`, done 64 deliveries to a statement. One statement
/// per id cost the sender more than the receiver spent storing the messages.
extension StoreAccess {
    /// Applies a receipt from `member`'s `event` to each of `ids` (outgoing messages in
    /// `conversation`): to their deliveries to that member only, through `StatusLattice.raise`,
    /// writing a timeline entry for each status that changed and taking each delivery found
    /// off the outbox. Unknown ids are skipped. Returns one change per delivery found, in the
    /// order found.
    /// `exceptAttachments`: an attachment among them is left as it is (a Delivered receipt for
    /// its item: its Delivered comes with the whole file), found in the same statement.
    public func raiseDeliveries(conversation: ConversationID, member: ContactID, ids: [MessageID], event: StatusEvent,
                                exceptAttachments: Bool = false, at now: Int64) throws -> [StatusChange] {
        try atomically {
            let changes = try raise(ids, lookup: exceptAttachments ? StatusBatchSQL.lookupByIDExceptAttachments : StatusBatchSQL.lookupByID,
                                    prefix: [.integer(conversation.rawValue), .integer(member.rawValue)],
                                    value: { .blob($0.bytes) }, event: event, at: now)
            // A receipt proved them arrived: a row offering Resend for them may have nothing left to offer.
            try withdrawSettledResendOffers(conversation: conversation,
                                            touched: changes.filter { $0.changed && $0.current.isFinal }.map(\.id))
            return changes
        }
    }

    /// The contact's direct conversation (`raiseDeliveries(conversation:member:…)`).
    public func raiseStatuses(contact: ContactID, ids: [MessageID], event: StatusEvent, exceptAttachments: Bool = false,
                              at now: Int64) throws -> [StatusChange] {
        try raiseDeliveries(conversation: contact.conversation, member: contact, ids: ids, event: event,
                            exceptAttachments: exceptAttachments, at: now)
    }

    /// The same for deliveries known by key (the relay's acknowledgements: Sent), a member's
    /// 64 to a statement.
    public func raiseDeliveries(_ deliveries: [DeliveryKey], event: StatusEvent, at now: Int64) throws -> [StatusChange] {
        guard !deliveries.isEmpty else { return [] }
        return try atomically {
            var byMember: [ContactID: [MessageRowID]] = [:]
            var members: [ContactID] = []
            for d in deliveries {
                if byMember[d.member] == nil { members.append(d.member) }
                byMember[d.member, default: []].append(d.message)
            }
            var changes: [StatusChange] = []
            for member in members {
                changes += try raise(byMember[member]!, lookup: StatusBatchSQL.lookupByRow, prefix: [.integer(member.rawValue)],
                                     value: { .integer($0.rawValue) }, event: event, at: now)
            }
            return changes
        }
    }

    /// Direct conversations' messages known by row: each one's one delivery.
    public func raiseStatuses(messages: [MessageRowID], event: StatusEvent, at now: Int64) throws -> [StatusChange] {
        try raise(messages, lookup: StatusBatchSQL.lookupDirectByRow, prefix: [], value: { .integer($0.rawValue) }, event: event, at: now)
    }

    private func raise<Key>(_ keys: [Key], lookup: String, prefix: [SQLValue], value: (Key) -> SQLValue,
                            event: StatusEvent, at now: Int64) throws -> [StatusChange] {
        guard !keys.isEmpty else { return [] }
        return try atomically {
            var changes: [StatusChange] = []
            changes.reserveCapacity(keys.count)
            var seen: Set<DeliveryKey> = []  // listed twice: raised once
            try BatchSQL.forEachList(keys) { part in
                for row in try database.query(lookup, prefix + BatchSQL.padded(part.map(value))) {
                    let delivery = DeliveryKey(message: try row.messageRowID("rowid"), member: try row.contactID("member_id"))
                    guard seen.insert(delivery).inserted else { continue }
                    guard let current = try row.status("status", table: "message_status") else {
                        throw StoreError.malformedValue(table: "message_status", column: "status", detail: "NULL")
                    }
                    changes.append(StatusChange(message: delivery.message, id: try row.messageID("id", table: "messages"),
                                                delivery: delivery, previous: current, current: StatusLattice.raise(current, event)))
                }
            }
            try write(changes.filter(\.changed), at: now)
            // Proof it arrived, or the relay took it: nothing of these deliveries is left to send.
            try forEachMember(changes) { member, part in
                try database.execute(StatusBatchSQL.removeFromOutbox,
                                     [.integer(member.rawValue)] + BatchSQL.padded(part.map { .integer($0.message.rawValue) }))
            }
            return changes
        }
    }

    /// `changes` by member, in parts of at most 64, in order.
    private func forEachMember(_ changes: [StatusChange], _ body: (ContactID, ArraySlice<StatusChange>) throws -> Void) throws {
        guard let first = changes.first?.member else { return }
        if changes.allSatisfy({ $0.member == first }) {  // the usual case: one member
            try BatchSQL.forEachList(changes) { try body(first, $0) }
            return
        }
        var byMember: [ContactID: [StatusChange]] = [:]
        for change in changes { byMember[change.member, default: []].append(change) }
        for member in byMember.keys.sorted() { try BatchSQL.forEachList(byMember[member]!) { try body(member, $0) } }
    }

    /// Writes changed statuses: one UPDATE per (from, to, member) and 64 rows, each a
    /// compare-and-set on the status read; then the timeline.
    private func write(_ changes: [StatusChange], at now: Int64) throws {
        var groups: [StatusStep: [StatusChange]] = [:]
        for change in changes {
            groups[StatusStep(from: change.previous, to: change.current, member: change.member), default: []].append(change)
        }
        for (step, group) in groups {
            try BatchSQL.forEachList(group) { part in
                let args = [.text(step.to.rawValue), .text(step.from.rawValue), .integer(step.member.rawValue)]
                    + BatchSQL.padded(part.map { .integer($0.message.rawValue) })
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
            log.reserveCapacity(4 * n)
            for change in part {
                log.append(contentsOf: [.integer(change.message.rawValue), .integer(change.member.rawValue), .text(change.current.rawValue),
                                        .integer(now)])
            }
            try database.execute(StatusBatchSQL.appendLog[n]!, log)
        }
    }
}

/// A change from one status to another of one member's deliveries: the updates are grouped
/// by it (a hashable triple, not an array made per change).
private struct StatusStep: Hashable {
    let from: MessageStatus
    let to: MessageStatus
    let member: ContactID
}

private enum StatusBatchSQL {
    // By id: the (conversation_id, id) index holds the rowid, so the wide message row is not
    // read; the delivery is found by its key.
    static let lookupByID = """
        SELECT m.rowid AS rowid, s.member_id AS member_id, m.id AS id, s.status AS status
        FROM messages AS m JOIN message_status AS s ON s.message_rowid = m.rowid AND s.member_id = ?2
        WHERE m.conversation_id = ?1 AND m.id IN
        """ + BatchSQL.inList
    // An attachment's row is found by its message's rowid (its key): one probe per id.
    static let lookupByIDExceptAttachments = """
        SELECT m.rowid AS rowid, s.member_id AS member_id, m.id AS id, s.status AS status
        FROM messages AS m JOIN message_status AS s ON s.message_rowid = m.rowid AND s.member_id = ?2
        WHERE m.conversation_id = ?1 AND NOT EXISTS (SELECT 1 FROM attachments AS a WHERE a.message_rowid = m.rowid) AND m.id IN
        """ + BatchSQL.inList
    static let lookupByRow = """
        SELECT s.message_rowid AS rowid, s.member_id AS member_id, m.id AS id, s.status AS status
        FROM message_status AS s JOIN messages AS m ON m.rowid = s.message_rowid
        WHERE s.member_id = ? AND s.message_rowid IN
        """ + BatchSQL.inList
    // A direct conversation's delivery goes to the contact whose id the conversation has.
    static let lookupDirectByRow = """
        SELECT s.message_rowid AS rowid, s.member_id AS member_id, m.id AS id, s.status AS status
        FROM messages AS m JOIN message_status AS s ON s.message_rowid = m.rowid AND s.member_id = m.conversation_id
        WHERE m.rowid IN
        """ + BatchSQL.inList
    static let update = "UPDATE message_status SET status = ? WHERE status = ? AND member_id = ? AND message_rowid IN " + BatchSQL.inList
    static let removeFromOutbox = "DELETE FROM outbox WHERE member_id = ? AND message_rowid IN " + BatchSQL.inList
    static let appendLog = BatchSQL.inserts("INSERT INTO status_log (message_rowid, member_id, status, at)", row: "(?, ?, ?, ?)")
}
