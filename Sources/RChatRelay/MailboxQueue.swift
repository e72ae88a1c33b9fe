import RChatWire

/// One mailbox's held frames, oldest first, packed into a few contiguous chunks.
///
/// Why an arena: a held 256-byte frame should cost little more than 256 bytes of memory.
/// Each record is a 29-byte header and the payload, appended to a chunk (a plain
/// `[UInt8]` whose capacity grows from 1 KiB to 64 KiB as the queue grows). Deleting marks
/// the record; a chunk is freed when its last record is gone. Acknowledgements usually
/// arrive in order, so chunks empty from the front.
///
/// Record layout: id u64 ‖ held-at i64 ‖ origin u32 ‖ length u32 ‖ flags u8 ‖ sender u32 ‖ payload;
/// flags: bit 0 deleted, bit 1 a message request (counted apart, against its own quota),
/// bit 2 cover (the mailbox's own, against the cover allowance). The sender is a number of
/// the relay's `SenderShares` (0: not known).
final class MailboxQueue {
    let mailbox: MailboxID
    private(set) var chunks: [HeldChunk] = []
    /// The number of `chunks[0]`; chunk numbers never repeat, so locations stay valid.
    private var firstChunkNumber = 0
    private(set) var liveCount = 0
    private(set) var liveBytes = 0
    /// Of `liveCount` and `liveBytes`, the message requests.
    private(set) var liveRequests = 0
    private(set) var liveRequestBytes = 0
    /// Of `liveCount` and `liveBytes`, cover (sent on link 0 by this mailbox itself).
    private(set) var liveCover = 0
    private(set) var liveCoverBytes = 0
    /// Where handover continues: the next record not yet handed to the current connection.
    private var cursor = Location(chunk: 0, offset: 0)
    /// Handed over on the current connection, not yet acknowledged.
    private(set) var inFlight: [HeldItemID: Location] = [:]
    /// Records to hand over before the cursor's (a handshake behind a long backlog would
    /// otherwise wait for all of it); they keep their place in the arena, and the cursor
    /// passes over them while they are in flight.
    private var ahead: [Location] = []
    private(set) var inFlightBytes = 0

    static let headerBytes = 29
    static let smallestChunk = 1024
    static let largestChunk = 64 * 1024

    struct Location: Equatable {
        var chunk: Int
        var offset: Int
    }

    struct Record {
        let id: HeldItemID
        let heldAt: Int64
        let origin: UInt32
        let location: Location
        let length: Int
        let isRequest: Bool
        let isCover: Bool
        let sender: UInt32
    }

    init(mailbox: MailboxID) {
        self.mailbox = mailbox
    }

    var isEmpty: Bool { liveCount == 0 }
    /// Held frames of conversations (everything but message requests), and their payload
    /// bytes: what `--quota` and `--quota-bytes` bound.
    var liveConversationCount: Int { liveCount - liveRequests }
    var liveConversationBytes: Int { liveBytes - liveRequestBytes }

    // MARK: adding

    func append(id: HeldItemID, heldAt: Int64, origin: UInt32, payload: [UInt8], ahead: Bool = false, request: Bool = false,
                cover: Bool = false, sender: UInt32 = 0) {
        let size = Self.headerBytes + payload.count
        if chunks.isEmpty || chunks[chunks.count - 1].room < size {
            // Grow geometrically: a mailbox holding one frame costs 1 KiB, a busy one
            // 64 KiB chunks with almost no slack.
            let last = chunks.last?.bytes.capacity ?? Self.smallestChunk / 2
            let capacity = max(size, min(Self.largestChunk, last * 2))
            chunks.append(HeldChunk(capacity: capacity))
        }
        if ahead { self.ahead.append(Location(chunk: firstChunkNumber + chunks.count - 1, offset: chunks[chunks.count - 1].bytes.count)) }
        chunks[chunks.count - 1].append(id: id, heldAt: heldAt, origin: origin, payload: payload, request: request, cover: cover, sender: sender)
        liveCount += 1
        liveBytes += payload.count
        if request {
            liveRequests += 1
            liveRequestBytes += payload.count
        }
        if cover {
            liveCover += 1
            liveCoverBytes += payload.count
        }
    }

    // MARK: handing over

    /// The next record sent ahead (a handshake) not yet handed over, moved into the
    /// in-flight set; nil when there is none.
    func takeAhead() -> Record? {
        while !ahead.isEmpty {
            let location = ahead.removeFirst()
            let index = location.chunk - firstChunkNumber
            // Gone already: its chunk was freed, or it was deleted (expired).
            guard index >= 0, index < chunks.count, !chunks[index].isDeleted(at: location.offset) else { continue }
            let record = chunks[index].record(at: location.offset, chunkNumber: location.chunk)
            guard inFlight[record.id] == nil else { continue }
            inFlight[record.id] = record.location
            inFlightBytes += record.length
            return record
        }
        return nil
    }

    /// The next record to hand over in order, moved into the in-flight set; nil when all are out.
    func takeNext() -> Record? {
        while true {
            let index = cursor.chunk - firstChunkNumber
            guard index < chunks.count else { return nil }
            if index < 0 { cursor = Location(chunk: firstChunkNumber, offset: 0); continue }
            let chunk = chunks[index]
            if cursor.offset >= chunk.bytes.count {
                if index == chunks.count - 1 { return nil }
                cursor = Location(chunk: cursor.chunk + 1, offset: 0)
                continue
            }
            let record = chunk.record(at: cursor.offset, chunkNumber: cursor.chunk)
            cursor.offset += Self.headerBytes + record.length
            if chunk.isDeleted(at: record.location.offset) || inFlight[record.id] != nil { continue }
            inFlight[record.id] = record.location
            inFlightBytes += record.length
            return record
        }
    }

    /// Whether records remain that the current connection has not been given.
    var hasUndelivered: Bool {
        var probe = cursor
        while true {
            let index = probe.chunk - firstChunkNumber
            if index < 0 { probe = Location(chunk: firstChunkNumber, offset: 0); continue }
            guard index < chunks.count else { return false }
            let chunk = chunks[index]
            if probe.offset >= chunk.bytes.count {
                probe = Location(chunk: probe.chunk + 1, offset: 0)
                continue
            }
            if !chunk.isDeleted(at: probe.offset), inFlight[chunk.record(at: probe.offset, chunkNumber: probe.chunk).id] == nil {
                return true
            }
            probe.offset += Self.headerBytes + chunk.length(at: probe.offset)
        }
    }

    func payload(of record: Record) -> ArraySlice<UInt8> {
        chunks[record.location.chunk - firstChunkNumber].payload(at: record.location.offset, length: record.length)
    }

    /// The client stored it: delete. Returns the deleted record, nil for an id not in flight here.
    func acknowledge(_ id: HeldItemID) -> Record? {
        guard let location = inFlight.removeValue(forKey: id) else { return nil }
        let record = chunks[location.chunk - firstChunkNumber].record(at: location.offset, chunkNumber: location.chunk)
        inFlightBytes -= record.length
        delete(at: location)
        return record
    }

    /// The connection went away: what it did not acknowledge is handed over again, from the start.
    func restartHandover() {
        // A new connection takes everything in order; what went ahead is stale by now.
        ahead.removeAll()
        inFlight.removeAll()
        inFlightBytes = 0
        cursor = Location(chunk: firstChunkNumber, offset: 0)
    }

    // MARK: expiry

    /// Deletes records held at or before `cutoff`, from the front; returns how many.
    func expire(heldAtOrBefore cutoff: Int64, onDelete: (Record) -> Void) -> Int {
        var removed = 0
        var probe = Location(chunk: firstChunkNumber, offset: 0)
        scan: while true {
            let index = probe.chunk - firstChunkNumber
            guard index >= 0, index < chunks.count else { break }
            let chunk = chunks[index]
            if probe.offset >= chunk.bytes.count {
                probe = Location(chunk: probe.chunk + 1, offset: 0)
                continue
            }
            let record = chunk.record(at: probe.offset, chunkNumber: probe.chunk)
            let next = Location(chunk: probe.chunk, offset: probe.offset + Self.headerBytes + record.length)
            if !chunk.isDeleted(at: probe.offset) {
                // Oldest first: the first record still fresh ends the scan.
                guard record.heldAt <= cutoff else { break scan }
                if inFlight.removeValue(forKey: record.id) != nil { inFlightBytes -= record.length }
                let before = chunks.count
                onDelete(record)
                delete(at: probe)
                removed += 1
                if chunks.count < before { probe = Location(chunk: firstChunkNumber, offset: 0); continue }
            }
            probe = next
        }
        return removed
    }

    private func delete(at location: Location) {
        let index = location.chunk - firstChunkNumber
        let (length, flags) = chunks[index].markDeleted(at: location.offset)
        liveCount -= 1
        liveBytes -= length
        if flags & HeldChunk.requestFlag != 0 {
            liveRequests -= 1
            liveRequestBytes -= length
        }
        if flags & HeldChunk.coverFlag != 0 {
            liveCover -= 1
            liveCoverBytes -= length
        }
        while let first = chunks.first, first.live == 0 {
            chunks.removeFirst()
            firstChunkNumber += 1
        }
    }

    /// Bytes this queue keeps allocated (for the memory figures in the log).
    var allocatedBytes: Int { chunks.reduce(0) { $0 + $1.bytes.capacity } }
}

/// One contiguous run of records.
final class HeldChunk {
    private(set) var bytes: [UInt8]
    private(set) var live = 0

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    var room: Int { bytes.capacity - bytes.count }

    func append(id: UInt64, heldAt: Int64, origin: UInt32, payload: [UInt8], request: Bool, cover: Bool, sender: UInt32) {
        put64(id); put64(UInt64(bitPattern: heldAt)); put32(origin); put32(UInt32(payload.count))
        bytes.append((request ? Self.requestFlag : 0) | (cover ? Self.coverFlag : 0))
        put32(sender)
        bytes.append(contentsOf: payload)
        live += 1
    }

    private func put64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(s))) } }
    private func put32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }

    private func get64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + $1]) } }
    private func get32(_ at: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[at + $1]) } }

    func length(at offset: Int) -> Int { Int(get32(offset + 20)) }
    static let deletedFlag: UInt8 = 1
    static let requestFlag: UInt8 = 2
    static let coverFlag: UInt8 = 4
    func isDeleted(at offset: Int) -> Bool { bytes[offset + 24] & Self.deletedFlag != 0 }

    func record(at offset: Int, chunkNumber: Int) -> MailboxQueue.Record {
        MailboxQueue.Record(id: get64(offset), heldAt: Int64(bitPattern: get64(offset + 8)), origin: get32(offset + 16),
                            location: .init(chunk: chunkNumber, offset: offset), length: length(at: offset),
                            isRequest: bytes[offset + 24] & Self.requestFlag != 0, isCover: bytes[offset + 24] & Self.coverFlag != 0,
                            sender: get32(offset + 25))
    }

    func payload(at offset: Int, length: Int) -> ArraySlice<UInt8> {
        bytes[(offset + MailboxQueue.headerBytes)..<(offset + MailboxQueue.headerBytes + length)]
    }

    /// Marks the record deleted; returns its payload length and its flags.
    func markDeleted(at offset: Int) -> (length: Int, flags: UInt8) {
        precondition(!isDeleted(at: offset))
        bytes[offset + 24] |= Self.deletedFlag
        live -= 1
        return (length(at: offset), bytes[offset + 24])
    }
}
