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
}

extension StoreAccess {
    private static var attachmentSelect: String { """
        SELECT message_rowid, direction, chunk_count, chunks, item_taken, stream_header, stream_state, next_chunk, hash_state,
               state, file, work_file, reason, waiting
        FROM attachments
        """ }

    /// The attachment row of a file being sent, written with its message: its sent copy is
    /// in place already, and every chunk is made from it and the stream's starting state.
    public func insertOutgoingAttachment(message: MessageRowID, chunkCount: Int, sentCopy: String, streamHeader: [UInt8],
                                         streamState: [UInt8]) throws {
        try database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, file, stream_header, stream_state)
            VALUES (?, 'out', ?, ?, ?, ?, ?)
            """, [.integer(message.rawValue), SQLValue(chunkCount), .blob(ChunkSet(count: chunkCount).encoded), .text(sentCopy),
                  .blob(streamHeader), .blob(streamState)])
    }

    /// The attachment row of a file that is to arrive; `workFile` will hold its plaintext.
    public func insertIncomingAttachment(message: MessageRowID, chunkCount: Int, workFile: String) throws {
        try database.execute("""
            INSERT INTO attachments (message_rowid, direction, chunk_count, chunks, work_file) VALUES (?, 'in', ?, ?, ?)
            """, [.integer(message.rawValue), SQLValue(chunkCount), .blob(ChunkSet(count: chunkCount).encoded), .text(workFile)])
    }

    public func attachment(message: MessageRowID) throws -> StoredAttachment? {
        try database.queryOne("\(Self.attachmentSelect) WHERE message_rowid = ?", [.integer(message.rawValue)])
            .map(Self.decodeAttachment)
    }

    /// The attachments among `messages`, by message.
    public func attachments(messages: [MessageRowID]) throws -> [MessageRowID: StoredAttachment] {
        var out: [MessageRowID: StoredAttachment] = [:]
        try BatchSQL.forEachList(messages) { part in
            for row in try database.query("\(Self.attachmentSelect) WHERE message_rowid IN " + BatchSQL.inList,
                                          BatchSQL.padded(part.map { .integer($0.rawValue) })) {
                let a = try Self.decodeAttachment(row)
                out[a.message] = a
            }
        }
        return out
    }

    /// Writes back what moved: the chunks done (ranges), the item; incoming, the header and where
    /// decryption stands.
    public func updateProgress(_ a: StoredAttachment) throws {
        if a.direction == .outgoing {
            try database.execute("UPDATE attachments SET chunks = ?, item_taken = ? WHERE message_rowid = ?",
                                 [.blob(a.chunks.encoded), SQLValue(a.itemTaken), .integer(a.message.rawValue)])
            return
        }
        try database.execute("""
            UPDATE attachments SET chunks = ?, stream_header = ?, stream_state = ?, next_chunk = ?, hash_state = ?
            WHERE message_rowid = ?
            """, [.blob(a.chunks.encoded), a.streamHeader.map(SQLValue.blob) ?? .null, a.streamState.map(SQLValue.blob) ?? .null,
                  SQLValue(a.nextChunk), a.hashState.map(SQLValue.blob) ?? .null, .integer(a.message.rawValue)])
    }

    /// What a file being sent waits for now (nil: nothing, it moves).
    public func setWaiting(message: MessageRowID, _ waiting: UploadWait?) throws {
        try database.execute("UPDATE attachments SET waiting = ? WHERE message_rowid = ? AND direction = 'out'",
                             [waiting.map { .text($0.rawValue) } ?? .null, .integer(message.rawValue)])
    }

    /// Sent again from the start (a resend): nothing counts as taken.
    public func restartSending(message: MessageRowID) throws {
        try database.execute("""
            UPDATE attachments SET chunks = X'', item_taken = 0 WHERE message_rowid = ? AND direction = 'out'
            """, [.integer(message.rawValue)])
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

    /// How many of `contact`'s files are arriving (incoming, not whole and not discarded).
    public func incomingFilesMoving(contact: ContactID) throws -> Int {
        Int(try database.queryOne("""
            SELECT count(*) FROM attachments a JOIN messages m ON m.rowid = a.message_rowid
            WHERE m.conversation_id = ? AND a.direction = 'in' AND a.state = 'moving'
            """, [.integer(contact.rawValue)])?.int64(at: 0) ?? 0)
    }

    /// The chunks `contact`'s files arriving have still to decrypt: what the disk must still
    /// take for them, in chunks.
    public func incomingChunksOutstanding(contact: ContactID) throws -> Int64 {
        try database.queryOne("""
            SELECT coalesce(sum(a.chunk_count - a.next_chunk), 0) FROM attachments a JOIN messages m ON m.rowid = a.message_rowid
            WHERE m.conversation_id = ? AND a.direction = 'in' AND a.state = 'moving'
            """, [.integer(contact.rawValue)])?.int64(at: 0) ?? 0
    }

    /// Incoming files not whole yet, of `contact`.
    public func attachmentsMoving(contact: ContactID, direction: Direction) throws -> [(id: MessageID, attachment: StoredAttachment)] {
        try database.query("""
            SELECT m.id AS mid, a.message_rowid, a.direction, a.chunk_count, a.chunks, a.item_taken, a.stream_header,
                   a.stream_state, a.next_chunk, a.hash_state, a.state, a.file, a.work_file, a.reason, a.waiting
            FROM attachments a JOIN messages m ON m.rowid = a.message_rowid
            WHERE m.conversation_id = ? AND a.direction = ? AND a.state = 'moving'
            ORDER BY m.position
            """, [.integer(contact.rawValue), .text(direction.rawValue)]).map {
            (try $0.messageID("mid", table: "messages"), try Self.decodeAttachment($0))
        }
    }

    /// Whole files whose Delivered receipt the relay has not taken yet, oldest first.
    public func fileReceiptsOwed(contact: ContactID, limit: Int) throws -> [MessageID] {
        try database.query("""
            SELECT m.id FROM attachments a JOIN messages m ON m.rowid = a.message_rowid
            WHERE a.delivered_owed = 1 AND m.conversation_id = ? ORDER BY m.position LIMIT ?
            """, [.integer(contact.rawValue), SQLValue(limit)]).map { try $0.messageID("id", table: "messages") }
    }

    public func settleFileReceipts(contact: ContactID, ids: [MessageID]) throws {
        try BatchSQL.forEachList(ids) { part in
            try database.execute("""
                UPDATE attachments SET delivered_owed = 0 WHERE message_rowid IN
                    (SELECT rowid FROM messages WHERE conversation_id = ? AND id IN \(BatchSQL.inList))
                """, [.integer(contact.rawValue)] + BatchSQL.padded(part.map { .blob($0.bytes) }))
        }
    }

    /// Contacts owed a file's Delivered receipt.
    public func contactsOwedFileReceipts() throws -> [ContactID] {
        try database.query("""
            SELECT DISTINCT m.conversation_id FROM attachments a JOIN messages m ON m.rowid = a.message_rowid WHERE a.delivered_owed = 1
            """).map { ContactID(try $0.int64("conversation_id")) }
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
                                workFile: try row.optionalString("work_file"), waiting: waiting)
    }
}
