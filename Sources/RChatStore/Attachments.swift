import RChatCore
import RChatSQL

/// An attachment's file as the store keeps track of it (table `attachments`).
public struct StoredAttachment: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        case moving
        /// Whole: `file` (relative to the home) holds the plaintext.
        case complete(file: String)
        case discarded(reason: String)
    }

    public let message: MessageRowID
    public let direction: Direction
    public var chunks: ChunkSet
    /// Outgoing: the relay took the message item.
    public var itemTaken: Bool
    /// The secretstream header: outgoing from the start, incoming once chunk 0 arrived.
    public var streamHeader: [UInt8]?
    /// The secretstream state: outgoing, as it was after the header; incoming, after the
    /// `nextChunk` chunks decrypted in order. Secret.
    public var streamState: [UInt8]?
    /// Incoming: how many chunks were decrypted in order (the plaintext written so far).
    public var nextChunk: Int
    /// Incoming: BLAKE2b's state over the plaintext of those chunks.
    public var hashState: [UInt8]?
    public var state: State
    /// Outgoing: the sent copy (relative to the home), there from the start.
    public var sentCopy: String?
    /// Incoming: the plaintext so far (relative to the home).
    public let workFile: String?
    /// Outgoing, moving: what it waits for, as the engine last found it (nil: it moves).
    public var waiting: UploadWait? = nil
    /// Outgoing: the member whose delivery `chunks`, `itemTaken` and `waiting` are
    /// (`attachment_sends`); nil for a summary over a group's deliveries (`attachments(messages:)`:
    /// the least far, read only) and for an incoming file.
    public var member: ContactID? = nil

    /// Outgoing: the relay took the item and every chunk (for a summary: for every member).
    public var isTakenWhole: Bool { itemTaken && chunks.isComplete }
}

extension StoreAccess {
    private static var attachmentSelect: String { """
        SELECT message_rowid, direction, chunk_count, chunks, item_taken, stream_header, stream_state, next_chunk, hash_state,
               state, file, work_file, reason, waiting
        FROM attachments
        """ }

    /// An outgoing file with one delivery's progress (`attachment_sends`).
    private static var deliveryColumns: String { """
        a.message_rowid, a.direction, a.chunk_count, d.chunks, d.item_taken, a.stream_header, a.stream_state, a.next_chunk,
        a.hash_state, a.state, a.file, a.work_file, a.reason, d.waiting, d.member_id
        """ }
    private static var deliverySelect: String {
        "SELECT \(deliveryColumns) FROM attachments a JOIN attachment_sends d ON d.message_rowid = a.message_rowid"
    }

    /// The attachment row of a file being sent, written with its message (after its
    /// deliveries: each gets its progress row, nothing taken yet): its sent copy is in place
    /// already, and every chunk is made from it and the stream's starting state.
    public func insertOutgoingAttachment(message: MessageRowID, chunkCount: Int, sentCopy: String, streamHeader: [UInt8],
                                         streamState: [UInt8]) throws {
        try database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, file, stream_header, stream_state)
            VALUES (?, 'out', ?, ?, ?, ?, ?)
            """, [.integer(message.rawValue), SQLValue(chunkCount), .blob(ChunkSet(count: chunkCount).encoded), .text(sentCopy),
                  .blob(streamHeader), .blob(streamState)])
        try database.execute("""
            INSERT INTO attachment_sends (message_rowid, member_id) SELECT message_rowid, member_id FROM message_status WHERE message_rowid = ?
            """, [.integer(message.rawValue)])
    }

    /// The attachment row of a file that is to arrive; `workFile` will hold its plaintext.
    public func insertIncomingAttachment(message: MessageRowID, chunkCount: Int, workFile: String) throws {
        try database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, work_file) VALUES (?, 'in', ?, ?, ?)
            """, [.integer(message.rawValue), SQLValue(chunkCount), .blob(ChunkSet(count: chunkCount).encoded), .text(workFile)])
    }

    /// A file as a message shows it: incoming, as it arrives; outgoing, a direct
    /// conversation's one delivery, a group's least far delivery to a current member
    /// (`attachments(messages:)`).
    public func attachment(message: MessageRowID) throws -> StoredAttachment? {
        try attachments(messages: [message])[message]
    }

    /// A file being sent, as its delivery to one member stands (nil: no such delivery of a file).
    public func attachment(delivery: DeliveryKey) throws -> StoredAttachment? {
        try database.queryOne("\(Self.deliverySelect) WHERE a.message_rowid = ? AND d.member_id = ?",
                              [.integer(delivery.message.rawValue), .integer(delivery.member.rawValue)]).map(Self.decodeAttachment)
    }

    /// The files among `messages` sent to `member`, as their deliveries to them stand, by message.
    public func attachments(messages: [MessageRowID], member: ContactID) throws -> [MessageRowID: StoredAttachment] {
        var out: [MessageRowID: StoredAttachment] = [:]
        try BatchSQL.forEachList(messages) { part in
            for row in try database.query("\(Self.deliverySelect) WHERE d.member_id = ? AND a.message_rowid IN " + BatchSQL.inList,
                                          [.integer(member.rawValue)] + BatchSQL.padded(part.map { .integer($0.rawValue) })) {
                let a = try Self.decodeAttachment(row)
                out[a.message] = a
            }
        }
        return out
    }

    /// The attachments among `messages`, by message, as each message shows it (`attachment(message:)`).
    public func attachments(messages: [MessageRowID]) throws -> [MessageRowID: StoredAttachment] {
        var out: [MessageRowID: StoredAttachment] = [:]
        var outgoing: [MessageRowID] = []
        try BatchSQL.forEachList(messages) { part in
            for row in try database.query("\(Self.attachmentSelect) WHERE message_rowid IN " + BatchSQL.inList,
                                          BatchSQL.padded(part.map { .integer($0.rawValue) })) {
                let a = try Self.decodeAttachment(row)
                out[a.message] = a
                if a.direction == .outgoing { outgoing.append(a.message) }
            }
        }
        guard !outgoing.isEmpty else { return out }
        // Each delivery's progress; what a message shows is its least far delivery to a
        // member still in the conversation (all of them when none is).
        var deliveries: [MessageRowID: [(current: Bool, a: StoredAttachment)]] = [:]
        try BatchSQL.forEachList(outgoing) { part in
            for row in try database.query("""
                SELECT \(Self.deliveryColumns), coalesce(cm.state, 'current') = 'current' AS current
                FROM attachments a JOIN attachment_sends d ON d.message_rowid = a.message_rowid
                JOIN messages m ON m.rowid = a.message_rowid
                LEFT JOIN conversation_members cm ON cm.conversation_id = m.conversation_id AND cm.contact_id = d.member_id
                WHERE a.message_rowid IN \(BatchSQL.inList)
                """, BatchSQL.padded(part.map { .integer($0.rawValue) })) {
                let a = try Self.decodeAttachment(row)
                deliveries[a.message, default: []].append((try row.int64("current") != 0, a))
            }
        }
        for (message, all) in deliveries {
            let counted = all.contains(where: \.current) ? all.filter(\.current).map(\.a) : all.map(\.a)
            guard var least = counted.min(by: { ($0.isTakenWhole ? 1 : 0, $0.chunks.doneCount) < ($1.isTakenWhole ? 1 : 0, $1.chunks.doneCount) })
            else { continue }
            if all.count > 1 { least.member = nil }
            out[message] = least
        }
        return out
    }

    /// Writes back what moved: outgoing, one delivery's chunks done (ranges) and item;
    /// incoming, the chunks, the header and where decryption stands.
    public func updateProgress(_ a: StoredAttachment) throws {
        if a.direction == .outgoing {
            guard let member = a.member else { throw StoreError.unknownMessage(a.message) }
            try database.execute("UPDATE attachment_sends SET chunks = ?, item_taken = ? WHERE message_rowid = ? AND member_id = ?",
                                 [.blob(a.chunks.encoded), SQLValue(a.itemTaken), .integer(a.message.rawValue), .integer(member.rawValue)])
            return
        }
        try database.execute("""
            UPDATE attachments SET chunks = ?, stream_header = ?, stream_state = ?, next_chunk = ?, hash_state = ?
            WHERE message_rowid = ?
            """, [.blob(a.chunks.encoded), a.streamHeader.map(SQLValue.blob) ?? .null, a.streamState.map(SQLValue.blob) ?? .null,
                  SQLValue(a.nextChunk), a.hashState.map(SQLValue.blob) ?? .null, .integer(a.message.rawValue)])
    }

    /// What a file's delivery waits for now (nil: nothing, it moves).
    public func setWaiting(_ delivery: DeliveryKey, _ waiting: UploadWait?) throws {
        try database.execute("UPDATE attachment_sends SET waiting = ? WHERE message_rowid = ? AND member_id = ?",
                             [waiting.map { .text($0.rawValue) } ?? .null, .integer(delivery.message.rawValue),
                              .integer(delivery.member.rawValue)])
    }

    /// A delivery sent again from the start (a resend): nothing of it counts as taken.
    public func restartSending(_ delivery: DeliveryKey) throws {
        try database.execute("UPDATE attachment_sends SET chunks = X'', item_taken = 0 WHERE message_rowid = ? AND member_id = ?",
                             [.integer(delivery.message.rawValue), .integer(delivery.member.rawValue)])
    }

    /// An incoming file that was discarded comes again (the sender resent it): from nothing.
    public func restartReceiving(message: MessageRowID) throws {
        try database.execute("""
            UPDATE attachments SET chunks = X'', stream_header = NULL, stream_state = NULL, next_chunk = 0,
                   hash_state = NULL, state = 'moving', reason = NULL, file = NULL, delivered_owed = 0
            WHERE message_rowid = ? AND direction = 'in' AND state = 'discarded'
            """, [.integer(message.rawValue)])
    }

    /// An incoming file is whole and its hash checked: its Delivered receipt is owed now.
    /// Shown before it was whole: its Read receipt is owed now too.
    public func completeReceiving(message: MessageRowID, file: String) throws {
        try database.execute("""
            UPDATE attachments SET state = 'complete', file = ?, delivered_owed = 1 WHERE message_rowid = ? AND direction = 'in'
            """, [.text(file), .integer(message.rawValue)])
        try database.execute("UPDATE messages SET read_owed = 1 WHERE rowid = ? AND read_at IS NOT NULL",
                             [.integer(message.rawValue)])
    }

    public func discardReceiving(message: MessageRowID, reason: String) throws {
        try database.execute("""
            UPDATE attachments SET state = 'discarded', reason = ?, file = NULL, delivered_owed = 0
            WHERE message_rowid = ? AND direction = 'in'
            """, [.text(reason), .integer(message.rawValue)])
    }

    /// How many of `author`'s files are arriving, in every conversation (incoming, not whole
    /// and not discarded).
    public func incomingFilesMoving(author: ContactID) throws -> Int {
        Int(try database.queryOne("""
            SELECT count(*) FROM attachments a JOIN messages m ON m.rowid = a.message_rowid
            WHERE m.author_id = ? AND a.direction = 'in' AND a.state = 'moving'
            """, [.integer(author.rawValue)])?.int64(at: 0) ?? 0)
    }

    /// The chunks `author`'s files arriving have still to decrypt: what the disk must still
    /// take for them, in chunks.
    public func incomingChunksOutstanding(author: ContactID) throws -> Int64 {
        try database.queryOne("""
            SELECT coalesce(sum(a.chunk_count - a.next_chunk), 0) FROM attachments a JOIN messages m ON m.rowid = a.message_rowid
            WHERE m.author_id = ? AND a.direction = 'in' AND a.state = 'moving'
            """, [.integer(author.rawValue)])?.int64(at: 0) ?? 0
    }

    /// Whole files of `author`'s (in any conversation: its Delivered names the id alone)
    /// whose Delivered receipt the relay has not taken yet, oldest first.
    public func fileReceiptsOwed(author: ContactID, limit: Int) throws -> [MessageID] {
        try database.query("""
            SELECT m.id FROM attachments a JOIN messages m ON m.rowid = a.message_rowid
            WHERE a.delivered_owed = 1 AND m.author_id = ? ORDER BY m.conversation_id DESC, m.position LIMIT ?
            """, [.integer(author.rawValue), SQLValue(limit)]).map { try $0.messageID("id", table: "messages") }
    }

    public func settleFileReceipts(author: ContactID, ids: [MessageID]) throws {
        try BatchSQL.forEachList(ids) { part in
            try database.execute("""
                UPDATE attachments SET delivered_owed = 0 WHERE delivered_owed = 1 AND message_rowid IN
                    (SELECT m.rowid FROM attachments o JOIN messages m ON m.rowid = o.message_rowid
                     WHERE o.delivered_owed = 1 AND m.author_id = ? AND m.id IN \(BatchSQL.inList))
                """, [.integer(author.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) }))
        }
    }

    /// Authors owed a file's Delivered receipt.
    public func authorsOwedFileReceipts() throws -> [ContactID] {
        try database.query("""
            SELECT DISTINCT m.author_id FROM attachments a JOIN messages m ON m.rowid = a.message_rowid WHERE a.delivered_owed = 1
            """).map { ContactID(try $0.int64("author_id")) }
    }

    static func decodeAttachment(_ row: Row) throws -> StoredAttachment {
        let count = Int(try row.int64("chunk_count"))
        guard let chunks = ChunkSet(count: count, encoded: try row.blob("chunks")) else {
            throw StoreError.malformedValue(table: "attachments", column: "chunks", detail: "ranges that do not fit \(count) chunks")
        }
        let state: StoredAttachment.State
        switch try row.string("state") {
        case "moving": state = .moving
        case "complete":
            guard let file = try row.optionalString("file") else {
                throw StoreError.malformedValue(table: "attachments", column: "file", detail: "a complete attachment without its file")
            }
            state = .complete(file: file)
        case "discarded": state = .discarded(reason: try row.optionalString("reason") ?? "")
        case let other: throw StoreError.malformedValue(table: "attachments", column: "state", detail: "unknown state \(other)")
        }
        let direction = try row.enumValue("direction", table: "attachments", as: Direction.self)
        let waiting = try row.optionalString("waiting").map { text in
            guard let value = UploadWait(rawValue: text) else {
                throw StoreError.malformedValue(table: "attachments", column: "waiting", detail: "unknown reason \(text)")
            }
            return value
        }
        return StoredAttachment(message: try row.messageRowID("message_rowid"), direction: direction, chunks: chunks,
                                itemTaken: try row.int64("item_taken") != 0, streamHeader: try row.optionalBlob("stream_header"),
                                streamState: try row.optionalBlob("stream_state"), nextChunk: Int(try row.int64("next_chunk")),
                                hashState: try row.optionalBlob("hash_state"),
                                state: state, sentCopy: direction == .outgoing ? try row.optionalString("file") : nil,
                                workFile: try row.optionalString("work_file"), waiting: waiting,
                                member: row["member_id"] == nil ? nil : try row.optionalInt64("member_id").map(ContactID.init))
    }
}
