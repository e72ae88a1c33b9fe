import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatStore
#if canImport(Glibc)
import Glibc
#endif

/// Attachments on the wire (docs/PROTOCOL.md, "Attachments"): the message item goes first,
/// then the file's chunks (`EnvelopeKind.chunk`), each its own relay frame. The message is
/// Sent when the relay took the item and every chunk; Delivered when the receiver has the
/// whole file, fsynced and its hash checked (`EnvelopeKind.fileDelivered`: the Delivered
/// receipt every message item gets says only that the item was stored).
/// What the transfers component reaches of the rest of the engine, and nothing else. The
/// component is handed it with every call and holds none of it, as a swift-nio handler is
/// handed its `ChannelHandlerContext`: `Engine` is one (`Engine+Transfers.swift`), a test's
/// stand-in another.
protocol TransfersContext: ComponentContext, SealsItems {
    /// The account's home: its files are under it (`AttachmentFiles`).
    var home: String { get }
    /// The largest file taken from a contact, in MiB (`max-incoming-mb`).
    var maxIncomingMB: Int { get }
    /// Whether the channel keeps the steady pace now: then its progress reports go at its slots' ends.
    func keepsPace(_ channel: PairwiseChannel) -> Bool
    /// Whether the channel's relay is connected now.
    func isConnected(_ channel: PairwiseChannel) -> Bool
    /// A frame that does not hold (forged, for no file sent): counted and logged, nothing else.
    func rejectForged(_ what: String)
    /// A change a view should show.
    func emit(_ event: ChatEvent)
    /// Stores the message items the batch holds so far (a chunk's item may be among them).
    func storeIncoming(_ after: inout Engine.AfterCommit, _ tx: StoreTransaction) throws
}

/// Files on their way, both ways (docs/PROTOCOL.md, "Attachments"): the chunks a file being
/// sent may send now (its window, the relay's room, the steady pace's slots), what the relay
/// took of each, and the progress and refusals a receiver reports; on the receiving side each
/// chunk decrypted in its turn or kept ahead of it, the file finished, checked and moved, or
/// discarded with a row saying why. What a session has in flight stays in the channel's
/// `SessionTraffic`; what each file has done is in the store; what is this run's alone is here.
final class Transfers {
    /// Files this run went on with after an earlier one (logged once each).
    var resumed: Set<MessageRowID> = []
    /// The chunks of each file this run wrote here.
    var chunksWrittenThisRun: [MessageRowID: Int] = [:]
    /// Files being sent in this run, with their chunk makers.
    var outgoingStreams: [MessageRowID: OutgoingStream] = [:]
    /// Files being received: the chunk count last reported to the sender.
    var progressReported: [MessageRowID: Int] = [:]

    /// Sends an attachment's item (unless the relay took it) and the chunks the relay has
    /// not taken and that are not on their way, while the relay has room. Returns false when
    /// it stopped for lack of room (nothing after it should go now).
    /// `chunks`: how many chunks may go now (nil: as many as the window and the relay's room
    /// let); one that could go but is over it waits for the steady pace's next slot.
    func sendAttachment(_ item: OutboxItem, _ channel: PairwiseChannel, _ saved: inout SavedSessionState,
                        client: any RelayLink, deadline: Double, chunks budget: inout Int?, context: some TransfersContext) throws(EngineError) -> Bool {
        guard let stored = try AccountService.wrap({ try context.store.attachment(delivery: item.delivery) }) else {
            context.log("an attachment to \(channel.contact.name) has no file record; it stays Sending")
            return true
        }
        let contact = channel.contact
        if !stored.itemTaken && !channel.traffic.sent.contains(item.message) {
            guard client.hasRoom(), let envelope = try context.sealItem(item, channel, &saved) else { return false }
            do {
                _ = try context.sendOnLink(channel, .envelope(envelope), as: .message(contact.id, item.message, isAttachment: true, conversation: item.conversation),
                                           flush: false)
            } catch { return false }
            channel.traffic.sent.insert(item.message)
            channel.expectAcknowledgement(of: item.message, by: deadline)
        }
        // Said at the first flush of this run, before any chunk of it went: what the relay
        // took in an earlier run (later, the count would include this run's).
        if resumed.insert(item.message).inserted, stored.chunks.doneCount > 0 {
            context.log("sending the rest of a file to \(contact.name): \(stored.chunks.doneCount) of \(stored.chunks.count) chunks were taken before")
        }
        var inFlight = channel.traffic.chunksInFlight[item.message] ?? []
        defer { channel.traffic.chunksInFlight[item.message] = inFlight }
        // While the receiver is online and says how far it is, at most a window ahead of it:
        // the relay then holds little, and nothing grows with the file's size.
        // Before its first report the receiver counts as having what the relay took before
        // (held for it, or stored), from the first chunk this session sends.
        if channel.traffic.peerFileProgress[item.message] == nil {
            channel.traffic.peerFileProgress[item.message] = (stored.chunks.doneCount, context.ticks)
        }
        let progress = channel.traffic.peerFileProgress[item.message]
        let receiverReporting = channel.linkState.link?.peerGone == false && progress.map { context.ticks - $0.at < Self.progressStaleSeconds } == true
        func windowFull() -> Bool {
            receiverReporting && stored.chunks.doneCount + inFlight.count - (progress?.chunks ?? 0) >= Self.fileWindowChunks
        }
        let missing = stored.chunks.missing(limit: stored.chunks.count).filter { !inFlight.contains($0) }
        guard !missing.isEmpty, case .attachment(let attachment) = item.content else { return true }
        let stream = try outgoingStream(item.message, stored, attachment, context: context)
        for index in missing {
            if windowFull() {
                // Nothing else may come to send the rest (the receiver stopped reporting):
                // the engine looks again once its last report is stale (`nextTimer`).
                let reopens = (progress?.at ?? context.ticks) + Self.progressStaleSeconds
                channel.windowReopensAt = min(channel.windowReopensAt ?? reopens, reopens)
                return true
            }
            if budget == 0 {
                channel.slotWaiting.chunks = true
                return true
            }
            guard client.hasRoom(), saved.canSeal else { return false }
            let chunk = try stream.chunk(index)
            let body = ChunkBody.encoded(index: index, streamHeader: stream.header, sealed: chunk)
            guard let envelope = saved.seal(kind: .chunk, messageID: item.id, body: body, conversation: channel.secret) else { return false }
            do {
                _ = try context.sendOnLink(channel, .envelope(envelope), as: .chunk(contact.id, item.message, index: index, conversation: item.conversation),
                                           flush: false)
            } catch {
                return false
            }
            inFlight.insert(index)
            budget = budget.map { $0 - 1 }
        }
        return true
    }

    /// The chunk maker of a file being sent, kept while it is sent in this run.
    private func outgoingStream(_ row: MessageRowID, _ stored: StoredAttachment, _ attachment: Attachment, context: some TransfersContext) throws(EngineError) -> OutgoingStream {
        if let stream = outgoingStreams[row] { return stream }
        guard let copy = stored.sentCopy, let header = stored.streamHeader, let start = stored.streamState else {
            throw .io("the sent copy of a file is not recorded; send the file again")
        }
        let stream = try OutgoingStream(file: OpenFile.openOwn(AttachmentFiles(home: context.home).absolute(copy), writable: false),
                                        size: attachment.size, header: header, start: start)
        outgoingStreams[row] = stream
        return stream
    }

    /// Chunks a sender keeps ahead of what the receiver reported stored (about 7.5 MiB), and
    /// how long a report counts: a receiver silent longer does not hold the sender back.
    static let fileWindowChunks = 128
    static let progressStaleSeconds = 5.0
    /// A receiver reports its progress every this many chunks stored, and when whole.
    static let progressEveryChunks = 32

    /// After a durable batch: tells the sender how many chunks of its file are stored here
    /// (at the steady pace's next slot's end, if it runs: `sendProgressOwed`).
    func reportFileProgress(_ row: MessageRowID, _ id: MessageID, _ chunks: Int, complete: Bool, _ channel: PairwiseChannel, context: some TransfersContext) {
        guard complete || chunks - (progressReported[row] ?? 0) >= Self.progressEveryChunks else { return }
        if context.keepsPace(channel) {
            channel.progressOwed[row] = (id, chunks, complete)
            channel.slotWaiting.receipts = true
            return
        }
        sendProgress(row, id, chunks, complete: complete, channel, context: context)
    }

    /// The progress reports that waited for a slot: one (`one`: at a slot's end) or all.
    /// Returns whether one went.
    @discardableResult
    func sendProgressOwed(_ channel: PairwiseChannel, one: Bool, context: some TransfersContext) -> Bool {
        var went = false
        for row in channel.progressOwed.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let owed = channel.progressOwed.removeValue(forKey: row) else { continue }
            if sendProgress(row, owed.id, owed.chunks, complete: owed.complete, channel, context: context) {
                went = true
                if one { return true }
            }
        }
        return went
    }

    @discardableResult
    private func sendProgress(_ row: MessageRowID, _ id: MessageID, _ chunks: Int, complete: Bool, _ channel: PairwiseChannel, context: some TransfersContext) -> Bool {
        var body = ByteWriter(capacity: 4)
        body.u32(UInt32(chunks))
        guard sendFileControl(.fileProgress, id, body.bytes, channel, context: context) else { return false }
        progressReported[row] = complete ? nil : chunks
        return true
    }

    /// A file's control envelope (progress, refusal) sealed in the session the peer holds and
    /// sent on the link, best effort; whether it went.
    private func sendFileControl(_ kind: EnvelopeKind, _ id: MessageID, _ body: [UInt8], _ channel: PairwiseChannel, context: some TransfersContext) -> Bool {
        guard channel.canSend, var saved = channel.saved, saved.peerHoldsSendingSession,
              let envelope = saved.seal(kind: kind, messageID: id, body: body, conversation: channel.secret) else { return false }
        channel.saved = saved
        let frame = LinkFrame.envelope(envelope)
        return (try? context.sendOnLink(channel, frame, as: .control(channel.contact.id, frame), flush: true)) != nil
    }

    /// What each file being sent to this conversation waits for (`UploadWait`), written
    /// where it changed (read first: a flush that changes nothing writes nothing), so that
    /// `rchat list` and the view say it; the view hears of it.
    func noteUploadWaits(_ channel: PairwiseChannel, _ files: [MessageRowID], context: some TransfersContext) {
        guard !files.isEmpty else { return }
        let route: UploadWait.Route
        if !context.isConnected(channel) { route = .offline }
        else if !channel.hasSession { route = .noSession }
        else { route = channel.awaitingVerification ? .unverifiedDevice : .session }
        do {
            var changes: [(MessageRowID, UploadWait?)] = []
            for (row, stored) in try context.store.attachments(messages: files, member: channel.contact.id) {
                guard case .moving = stored.state else { continue }
                let waiting = channel.isReachable
                    ? UploadWait.reason(allTaken: stored.isTakenWhole, route: route, refusedForRoom: channel.roomRefused.contains(row))
                    : nil
                if waiting != stored.waiting { changes.append((row, waiting)) }
            }
            guard !changes.isEmpty else { return }
            let moved = try context.store.transaction { tx in
                try changes.compactMap { row, waiting in
                    try tx.setWaiting(DeliveryKey(message: row, member: channel.contact.id), waiting)
                    return try tx.message(row)
                }
            }
            for message in moved { context.emit(.transferMoved(conversation: message.conversation, id: message.id)) }
        } catch {
            context.log("cannot record what a file waits for: \(error)")
        }
    }

    /// The relay took chunks (and perhaps items) of attachments: recorded; those now
    /// taken whole are returned, to be raised to Sent with the other messages.
    /// Each delivery moves on its own (a group's file goes to each member over their channel).
    func attachmentsTaken(chunks: [DeliveryKey: [Int]], items: Set<DeliveryKey>, _ tx: StoreTransaction,
                          _ events: inout [ChatEvent], context: some TransfersContext) throws -> [DeliveryKey] {
        var whole: [DeliveryKey] = []
        var moved: Set<MessageRowID> = []
        for delivery in Set(chunks.keys).union(items).sorted(by: { ($0.message, $0.member) < ($1.message, $1.member) }) {
            guard var stored = try tx.attachment(delivery: delivery) else { continue }
            for index in chunks[delivery] ?? [] { stored.chunks.insert(index) }
            if items.contains(delivery) { stored.itemTaken = true }
            try tx.updateProgress(stored)
            if stored.isTakenWhole {
                whole.append(delivery)
                if stored.waiting != nil { try tx.setWaiting(delivery, nil) }
            }
            if moved.insert(delivery.message).inserted, let message = try tx.message(delivery.message) {
                events.append(.transferMoved(conversation: message.conversation, id: message.id))
            }
        }
        // A stream is kept while any delivery of its file still takes chunks.
        for row in Set(whole.map(\.message)) where try tx.attachment(message: row)?.isTakenWhole != false {
            outgoingStreams[row] = nil
        }
        return whole
    }
    // MARK: receiving

    /// A message item that is an attachment was stored (or came again): its file record,
    /// or, if it was discarded before, a fresh start (the sender resent it).
    func attachmentItemStored(_ channel: PairwiseChannel, id: MessageID, _ attachment: Attachment,
                              _ tx: StoreTransaction, _ after: inout Engine.AfterCommit, context: some TransfersContext) throws {
        let contact = channel.contact
        guard let message = try tx.message(from: contact.id, id: id) else { return }
        // What the contact declares is checked before anything is written for it (over
        // their files in every conversation: the bound is per sender).
        let decision = IncomingFilePolicy.decide(
            size: attachment.size, limitMB: UInt64(context.maxIncomingMB), moving: try tx.incomingFilesMoving(author: contact.id),
            reserved: UInt64(try tx.incomingChunksOutstanding(author: contact.id)) * UInt64(FileStream.plainChunkBytes),
            free: AttachmentFiles(home: context.home).freeBytes())
        if let stored = try tx.attachment(message: message.rowID) {
            // Sent again after it was discarded: from nothing, if it may come now.
            if case .discarded = stored.state, decision == .accept { try tx.restartReceiving(message: message.rowID) }
            return
        }
        try tx.insertIncomingAttachment(message: message.rowID, chunkCount: FileStream.chunkCount(size: attachment.size),
                                        workFile: "\(AttachmentFiles.partial)/\(contact.id.rawValue)-\(id.hex).part")
        guard let row = IncomingFilePolicy.row(decision, name: attachment.name, size: attachment.size, contact: contact.name),
              let reason = IncomingFilePolicy.reason(decision) else { return }
        // Refused: recorded as discarded, so its chunks are acknowledged and dropped as they come.
        context.log("a file from \(contact.name): \(reason)")
        try tx.discardReceiving(message: message.rowID, reason: reason)
        _ = try tx.addSystemRow(conversation: message.conversation, member: contact.id, kind: .fileDiscarded, text: row, action: nil,
                                messageIDs: [id], at: context.now)
        after.events.append(.rowAdded(conversation: message.conversation))
        after.refusals.append((channel, id, decision))
    }

    /// After a durable batch: tells the sender its file was not taken in, and why. Best
    /// effort, as progress reports are: without it the sender's copy is just as true (Sent,
    /// never Delivered), only silent about why.
    func tellFileRefused(_ id: MessageID, _ decision: IncomingFilePolicy.Decision, _ channel: PairwiseChannel, context: some TransfersContext) {
        guard let (why, figure) = IncomingFilePolicy.wire(decision) else { return }
        var body = ByteWriter(capacity: 9)
        body.u8(why)
        body.u64(figure)
        _ = sendFileControl(.fileRefused, id, body.bytes, channel, context: context)
    }

    /// The contact did not take in a file this side sent: a row says why, once.
    func fileRefused(_ body: [UInt8], id: MessageID, in channel: PairwiseChannel, _ tx: StoreTransaction,
                     _ after: inout Engine.AfterCommit, context: some TransfersContext) throws {
        let contact = channel.contact
        var r = ByteReader(body)
        guard let why = try? r.u8(), let figure = try? r.u64(), let decision = IncomingFilePolicy.refusal(why: why, figure: figure),
              let message = try tx.message(to: contact.id, id: id),
              case .attachment(let attachment) = message.content,
              let text = IncomingFilePolicy.senderRow(decision, name: attachment.name, contact: contact.name) else {
            return context.rejectForged("a file refusal from \(contact.name) for no file sent to them")
        }
        // Once per member: in a group each may refuse it.
        let kind = SystemRowKind.fileRefused(id)
        guard try tx.systemRowPosition(conversation: message.conversation, member: contact.id, kind: kind, since: 0) == nil else { return }
        context.log("\(contact.name) did not take in a file: \(decision)")
        _ = try tx.addSystemRow(conversation: message.conversation, member: contact.id, kind: kind, text: text, action: nil,
                                messageIDs: [id], at: context.now)
        after.events.append(.rowAdded(conversation: message.conversation))
    }

    /// One chunk of a file being received. In its turn it is decrypted at once and its
    /// plaintext written at its place in the partial file (with what came ahead of it and
    /// now follows); ahead of its turn it waits, encrypted, in the partial file's `.ahead`
    /// file. Either is fsynced before the batch commits (`Engine.AfterCommit.partialFiles`), with
    /// the stream's and the hash's state in the same row. The last one finishes the file.
    func receiveChunk(_ body: [UInt8], id: MessageID, sealedIn session: [UInt8], in channel: PairwiseChannel,
                      _ tx: StoreTransaction, _ after: inout Engine.AfterCommit, context: some TransfersContext) throws {
        let contact = channel.contact
        guard !contact.isBlocked, !contact.isDeleted else { return }
        // Its item may be waiting in this batch: store it first.
        if after.incoming.contains(where: { $0.1.id == id && $0.0 === channel })
            || after.groupIncoming.contains(where: { $0.2.id == id && $0.0 === channel }) {
            try context.storeIncoming(&after, tx)
        }
        guard let message = try tx.message(from: contact.id, id: id),
              case .attachment(let attachment) = message.content,
              var stored = try tx.attachment(message: message.rowID), let workFile = stored.workFile else {
            return context.rejectForged("a file chunk from \(contact.name) for no file it sent")
        }
        guard case .moving = stored.state else { return }  // whole already, or discarded: a late copy
        guard let index = ChunkBody.index(of: body) else { return context.rejectForged("a file chunk from \(contact.name) without its index") }
        guard index < stored.chunks.count else { return context.rejectForged("a file chunk from \(contact.name) past the file's end") }
        guard !stored.chunks.contains(index) else { return }  // a copy: stored already
        let chunk: [UInt8]
        switch ChunkBody.parts(of: body, index: index, size: attachment.size) {
        case .failure(.noStreamHeader): return context.rejectForged("a first file chunk from \(contact.name) without its header")
        case .failure: return context.rejectForged("a file chunk from \(contact.name) of the wrong length")
        case .success(let parts):
            if let header = parts.streamHeader { stored.streamHeader = header }
            chunk = parts.sealed
        }
        if stored.chunks.doneCount > 0, chunksWrittenThisRun[message.rowID] == nil, resumed.insert(message.rowID).inserted {
            context.log("receiving the rest of a file from \(contact.name): \(stored.chunks.doneCount) of \(stored.chunks.count) chunks were here")
        }
        let files = AttachmentFiles(home: context.home)
        func open(_ relative: String) throws(EngineError) -> OpenFile {
            if let file = after.partialFiles[relative] { return file }
            _ = try files.directory(AttachmentFiles.partial)
            let path = files.absolute(relative)
            let file = PrivateFiles.exists(path) ? try OpenFile.openOwn(path, writable: true) : try OpenFile.create(path)
            after.partialFiles[relative] = file
            after.partialOwners[relative] = (channel, message.rowID, session)
            return file
        }
        let ahead = workFile + ".ahead"
        stored.chunks.insert(index)
        chunksWrittenThisRun[message.rowID, default: 0] += 1
        // A chunk that does not decrypt: the file cannot be read, and the sender is told. One
        // that cannot be written (the disk is full, a file-size limit): that file is given up
        // here, and the batch — every other conversation's messages — commits as ever.
        do {
            if index == stored.nextChunk {
                try decryptInTurn(&stored, first: chunk, attachment, plain: open(workFile), ahead: { () throws(EngineError) in try open(ahead) })
            } else {
                try open(ahead).write(chunk, at: Int64(index) * Int64(FileStream.cipherChunkBytes))
            }
        } catch EngineError.io(let text) {
            return try discardIncoming(message, attachment, stored, .unwritable(text), session: session, in: channel, tx, &after, context: context)
        } catch {
            return try discardIncoming(message, attachment, stored, .unreadable(error), session: session, in: channel, tx, &after, context: context)
        }
        try tx.updateProgress(stored)
        after.fileProgress[message.rowID] = (channel, id, stored.chunks.doneCount, stored.chunks.isComplete)
        if !after.events.contains(.transferMoved(conversation: message.conversation, id: id)) {
            after.events.append(.transferMoved(conversation: message.conversation, id: id))
        }
        if stored.nextChunk == stored.chunks.count {
            do {
                try finishIncoming(message, attachment, stored, plain: open(workFile), session: session, in: channel, tx, &after, context: context)
            } catch EngineError.io(let text) {
                after.fileProgress[message.rowID] = nil
                try discardIncoming(message, attachment, stored, .unwritable(text), session: session, in: channel, tx, &after, context: context)
            }
        }
    }

    /// Why a file being received is discarded.
    enum Discard {
        /// A chunk did not decrypt, or the hash did not match: the sender is told, to send it again.
        case unreadable(Error)
        /// Writing or syncing it failed (`EngineError.io`'s text, ending in the system's reason).
        case unwritable(String)
    }

    /// Decrypts `first` (chunk `stored.nextChunk`) and then every chunk that waited ahead of
    /// its turn and now follows, writing the plaintext at its place and hashing it; the
    /// stream's and the hash's state go back into `stored`.
    private func decryptInTurn(_ stored: inout StoredAttachment, first: [UInt8], _ attachment: Attachment, plain: OpenFile,
                               ahead: () throws(EngineError) -> OpenFile) throws(EngineError) {
        var decryptor: FileStream.Decryptor
        if let state = stored.streamState {
            guard let resumed = FileStream.Decryptor(stateBytes: state, next: stored.nextChunk) else { throw .crypto("a damaged stream state") }
            decryptor = resumed
        } else {
            var key = attachment.key
            do { decryptor = try FileStream.Decryptor(key: SecretBytes(consuming: &key), header: stored.streamHeader ?? []) }
            catch { throw .crypto(error.description) }
        }
        var hash: StreamingHash
        if let state = stored.hashState {
            guard let resumed = StreamingHash(stateBytes: state) else { throw .crypto("a damaged hash state") }
            hash = resumed
        } else {
            hash = StreamingHash()
        }
        let count = stored.chunks.count
        var cipher = first
        while true {
            let index = stored.nextChunk
            var opened: Result<[UInt8], FileStream.OpenError> = .failure(.chunk(index: index))
            cipher.withUnsafeBytes { buf in
                do throws(FileStream.OpenError) { opened = .success(try decryptor.open(buf, final: index == count - 1)) }
                catch { opened = .failure(error) }
            }
            let plaintext: [UInt8]
            switch opened {
            case .success(let bytes): plaintext = bytes
            case .failure(let error): throw .crypto(error.description)
            }
            plaintext.withUnsafeBytes { hash.update($0) }
            try plain.write(plaintext, at: Int64(index) * Int64(FileStream.plainChunkBytes))
            stored.nextChunk = index + 1
            guard stored.nextChunk < count, stored.chunks.contains(stored.nextChunk) else { break }
            let next = stored.nextChunk
            let length = FileStream.plainBytes(ofChunk: next, size: attachment.size) + FileStream.overheadBytes
            // Not there to read back: the file cannot be read (and is asked for again), unlike
            // one that cannot be written (`Discard`).
            do { cipher = try ahead().read(count: length, at: Int64(next) * Int64(FileStream.cipherChunkBytes)) } catch {
                throw .crypto("a chunk that waited for its turn cannot be read back: \(error)")
            }
            guard cipher.count == length else { throw .crypto("a chunk that waited for its turn is missing from its file") }
        }
        stored.streamState = decryptor.stateBytes
        stored.hashState = hash.stateBytes
    }

    /// Every chunk is decrypted: the hash decides. Whole and checked, the file moves to
    /// `files/received/` and its Delivered is owed; otherwise it is discarded.
    private func finishIncoming(_ message: StoredMessage, _ attachment: Attachment, _ stored: StoredAttachment, plain: OpenFile,
                                session: [UInt8], in channel: PairwiseChannel, _ tx: StoreTransaction,
                                _ after: inout Engine.AfterCommit, context: some TransfersContext) throws {
        guard let state = stored.hashState, let hash = StreamingHash(stateBytes: state),
              constantTimeEqual(hash.finish(), attachment.contentHash) else {
            return try discardIncoming(message, attachment, stored, .unreadable(EngineError.crypto("the file's hash does not match")),
                                       session: session, in: channel, tx, &after, context: context)
        }
        let files = AttachmentFiles(home: context.home)
        _ = try files.directory(AttachmentFiles.received)
        let target = files.freeName(AttachmentName.sanitised(attachment.name), in: AttachmentFiles.received)
        try plain.sync()
        // The received name is made before the commit; the partial name goes after it.
        guard let workFile = stored.workFile, link(files.absolute(workFile), files.absolute(target)) == 0 else {
            throw EngineError.io("cannot move a received file into \(files.absolute(AttachmentFiles.received)): \(String(cString: strerror(errno)))")
        }
        // The name must be durable before the commit that owes the file's Delivered: a folder
        // that cannot be synced stops the batch (and the name made for it goes).
        let folder = files.absolute(AttachmentFiles.received)
        if let reason = FolderSync.sync(folder) {
            unlink(files.absolute(target))
            throw EngineError.store(.cannotSync(path: folder, reason: reason))
        }
        after.filesToRemove += [files.absolute(workFile), files.absolute(workFile + ".ahead")]
        try tx.completeReceiving(message: message.rowID, file: target)
        after.receiptsOwed += 1
        context.log("a file from \(channel.contact.name) arrived whole (\(attachment.size) bytes, \(stored.chunks.count) chunks, \(chunksWrittenThisRun[message.rowID] ?? 0) written in this run)")
        after.events.append(.transferMoved(conversation: message.conversation, id: message.id))
    }

    /// A file that cannot be read (a chunk that does not decrypt, a hash that does not
    /// match): nothing of it is kept, a row says so, and its id is reported as could not be
    /// read, so the sender's recovery sends it again. One that cannot be written: nothing of
    /// it is kept either (the partial file goes, giving its space back) and a row says why;
    /// the sender is not asked again (on a full disk it would only fill it again).
    private func discardIncoming(_ message: StoredMessage, _ attachment: Attachment, _ stored: StoredAttachment, _ why: Discard,
                                 session: [UInt8], in channel: PairwiseChannel, _ tx: StoreTransaction,
                                 _ after: inout Engine.AfterCommit, context: some TransfersContext) throws {
        let contact = channel.contact
        let files = AttachmentFiles(home: context.home)
        if let workFile = stored.workFile {
            after.partialFiles[workFile] = nil
            after.partialFiles[workFile + ".ahead"] = nil
            after.filesToRemove += [files.absolute(workFile), files.absolute(workFile + ".ahead")]
        }
        switch why {
        case .unreadable(let error):
            context.log("a file from \(contact.name) was discarded: \(error)")
            try tx.discardReceiving(message: message.rowID, reason: "it did not match what \(contact.name) sent")
            _ = try tx.addSystemRow(conversation: message.conversation, member: contact.id, kind: .fileDiscarded,
                                    text: "\(attachment.name) from \(contact.name) could not be read and was discarded. \(contact.name) has been told, so they can send it again.",
                                    action: nil, messageIDs: [message.id], at: context.now)
            _ = try tx.recordUndecryptable(contact: contact.id, id: message.id, session: session, at: context.now)
        case .unwritable(let text):
            context.log("a file from \(contact.name) was discarded: \(text)")
            // The system's reason ends the text ("cannot write PATH: No space left on device").
            let system = text.components(separatedBy: ": ").last ?? text
            try tx.discardReceiving(message: message.rowID, reason: "it could not be saved (\(system))")
            _ = try tx.addSystemRow(conversation: message.conversation, member: contact.id, kind: .fileDiscarded,
                                    text: IncomingFilePolicy.writeFailedRow(name: attachment.name, contact: contact.name, reason: system),
                                    action: nil, messageIDs: [message.id], at: context.now)
        }
        after.events.append(.rowAdded(conversation: message.conversation))
        after.events.append(.transferMoved(conversation: message.conversation, id: message.id))
    }

    /// Before the batch commits: what was written to partial files is on disk. A file that
    /// cannot be synced (the disk filled up under it) is discarded like one that cannot be
    /// written; the batch commits with the rest.
    func syncPartialFiles(_ after: inout Engine.AfterCommit, _ tx: StoreTransaction, context: some TransfersContext) throws {
        for (relative, file) in after.partialFiles.sorted(by: { $0.key < $1.key }) where after.partialFiles[relative] != nil {
            let failure = file.syncFailure()
            guard let text = failure else { continue }
            guard let (channel, row, session) = after.partialOwners[relative], let message = try tx.message(row),
                  case .attachment(let attachment) = message.content, let stored = try tx.attachment(message: row)
            else { throw EngineError.io(text) }
            // Whole in this batch: its plaintext was synced before it was moved, and what is
            // left (its `.ahead` file) goes after the commit.
            guard case .moving = stored.state else { continue }
            try discardIncoming(message, attachment, stored, .unwritable(text), session: session, in: channel, tx, &after, context: context)
            after.fileProgress[row] = nil
        }
        after.partialFiles.removeAll()
        after.partialOwners.removeAll()
    }
}

/// Makes the chunks of a file being sent from its sent copy: encrypted as they go, in
/// order, from the stream's starting state; a chunk asked for again (a resend, a chunk the
/// relay did not take, another member of a group further behind) is made again by running
/// the stream from the nearest state kept before it (one every `checkpointEvery` chunks),
/// which gives the same bytes (`FileStream`): going back costs at most that many chunks.
final class OutgoingStream {
    let file: OpenFile
    let size: UInt64
    let header: [UInt8]
    private var encryptor: FileStream.Encryptor
    private var next = 0
    /// The stream's state before chunk `k × checkpointEvery`, for each k reached so far.
    private var checkpoints: [[UInt8]]
    static let checkpointEvery = 32

    init(file: OpenFile, size: UInt64, header: [UInt8], start: [UInt8]) throws(EngineError) {
        guard let encryptor = FileStream.Encryptor(stateBytes: start) else { throw .crypto("a damaged stream state") }
        self.file = file
        self.size = size
        self.header = header
        self.encryptor = encryptor
        self.checkpoints = [start]
    }

    func chunk(_ index: Int) throws(EngineError) -> [UInt8] {
        let count = FileStream.chunkCount(size: size)
        precondition(index < count)
        // The nearest state kept at or before `index`: back to it, or ahead to it past chunks
        // not needed now.
        let k = min(index / Self.checkpointEvery, checkpoints.count - 1)
        if index < next || k * Self.checkpointEvery > next {
            guard let again = FileStream.Encryptor(stateBytes: checkpoints[k]) else { throw .crypto("a damaged stream state") }
            encryptor = again
            next = k * Self.checkpointEvery
        }
        while true {
            if next % Self.checkpointEvery == 0, next / Self.checkpointEvery == checkpoints.count {
                checkpoints.append(encryptor.stateBytes)
            }
            let length = FileStream.plainBytes(ofChunk: next, size: size)
            let plain = try file.read(count: length, at: Int64(next) * Int64(FileStream.plainChunkBytes))
            guard plain.count == length else { throw .io("\(file.path) is shorter than the file sent; send it again") }
            let sealed = plain.withUnsafeBytes { encryptor.seal($0, final: next == count - 1) }
            next += 1
            if next - 1 == index { return sealed }
        }
    }
}
