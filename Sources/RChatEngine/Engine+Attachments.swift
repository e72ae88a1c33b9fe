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
extension Engine {
    /// Sends an attachment's item (unless the relay took it) and the chunks the relay has
    /// not taken and that are not on their way, while the relay has room. Returns false when
    /// it stopped for lack of room (nothing after it should go now).
    func sendAttachment(_ item: OutboxItem, _ conversation: LiveConversation, _ saved: inout SavedSessionState,
                        keys: SessionKeys, client: any RelayLink, deadline: Double) throws(EngineError) -> Bool {
        guard let stored = try AccountService.wrap({ try store.attachment(message: item.message) }) else {
            log("an attachment to \(conversation.contact.name) has no file record; it stays Sending")
            return true
        }
        let contact = conversation.contact
        if !stored.itemTaken && !conversation.sent.contains(item.message) {
            guard client.hasRoom(), let sequence = saved.takeSendSequence() else { return false }
            let envelope = Envelope.seal(kind: .message, messageID: item.id, sequence: sequence, body: item.encodedContent,
                                         keys: keys, conversation: conversation.secret)
            do { try sendOnLink(conversation, .envelope(envelope), as: .message(contact.id, item.message), flush: false) } catch { return false }
            conversation.sent.insert(item.message)
            conversation.acknowledgementDeadlines[item.message] = conversation.acknowledgementDeadlines[item.message] ?? deadline
        }
        if stored.chunks.doneCount > 0, attachmentsResumed.insert(item.message).inserted {
            log("sending the rest of a file to \(contact.name): \(stored.chunks.doneCount) of \(stored.chunks.count) chunks were taken before")
        }
        var inFlight = conversation.chunksInFlight[item.message] ?? []
        defer { conversation.chunksInFlight[item.message] = inFlight }
        // While the receiver is online and says how far it is, at most a window ahead of it:
        // the relay then holds little, and nothing grows with the file's size.
        let progress = conversation.peerFileProgress[item.message]
        let receiverReporting = conversation.linkState.link?.peerGone == false && progress.map { ticks - $0.at < Self.progressStaleSeconds } == true
        func windowFull() -> Bool {
            receiverReporting && stored.chunks.doneCount + inFlight.count - (progress?.chunks ?? 0) >= Self.fileWindowChunks
        }
        let missing = stored.chunks.missing(limit: stored.chunks.count).filter { !inFlight.contains($0) }
        guard !missing.isEmpty, case .attachment(let attachment) = item.content else { return true }
        let work = try OpenFile.openOwn(AttachmentFiles(home: account.locations.home).absolute(stored.workFile), writable: false)
        for index in missing {
            if windowFull() { return true }
            guard client.hasRoom(), let sequence = saved.takeSendSequence() else { return false }
            let length = FileStream.plainBytes(ofChunk: index, size: attachment.size) + FileStream.overheadBytes
            var body = ByteWriter(capacity: 4 + FileStream.headerBytes + length)
            body.u32(UInt32(index))
            if index == 0 { body.raw(try work.read(count: FileStream.headerBytes, at: 0)) }
            let chunk = try work.read(count: length, at: FileStream.cipherOffset(ofChunk: index))
            guard chunk.count == length else { throw .io("\(work.path) is shorter than the file it holds; send the file again") }
            body.raw(chunk)
            let envelope = Envelope.seal(kind: .chunk, messageID: item.id, sequence: sequence, body: body.bytes, keys: keys,
                                         conversation: conversation.secret)
            do {
                try sendOnLink(conversation, .envelope(envelope), as: .chunk(contact.id, item.message, index: index), flush: false)
            } catch {
                return false
            }
            inFlight.insert(index)
        }
        return true
    }

    /// Chunks a sender keeps ahead of what the receiver reported stored (about 7.5 MiB), and
    /// how long a report counts: a receiver silent longer does not hold the sender back.
    static let fileWindowChunks = 128
    static let progressStaleSeconds = 5.0
    /// A receiver reports its progress every this many chunks stored, and when whole.
    static let progressEveryChunks = 32

    /// After a durable batch: tells the sender how many chunks of its file are stored here.
    func reportFileProgress(_ row: MessageRowID, _ id: MessageID, _ chunks: Int, complete: Bool, _ conversation: LiveConversation) {
        guard complete || chunks - (fileProgressReported[row] ?? 0) >= Self.progressEveryChunks,
              conversation.canSend, var saved = conversation.saved, saved.peerHoldsSendingSession, let keys = saved.sendKeys,
              let sequence = saved.takeSendSequence() else { return }
        var body = ByteWriter(capacity: 4)
        body.u32(UInt32(chunks))
        let envelope = Envelope.seal(kind: .fileProgress, messageID: id, sequence: sequence, body: body.bytes, keys: keys,
                                     conversation: conversation.secret)
        conversation.saved = saved
        let frame = LinkFrame.envelope(envelope)
        guard (try? sendOnLink(conversation, frame, as: .control(conversation.contact.id, frame))) != nil else { return }
        fileProgressReported[row] = complete ? nil : chunks
    }

    /// The relay took chunks (and perhaps items) of attachments: recorded; those now
    /// taken whole are returned, to be raised to Sent with the other messages.
    func attachmentsTaken(chunks: [MessageRowID: [Int]], items: Set<MessageRowID>, _ tx: StoreTransaction,
                          _ events: inout [ChatEvent]) throws -> [MessageRowID] {
        var whole: [MessageRowID] = []
        for row in Set(chunks.keys).union(items) {
            guard var stored = try tx.attachment(message: row), stored.direction == .outgoing else { continue }
            for index in chunks[row] ?? [] { stored.chunks.insert(index) }
            if items.contains(row) { stored.itemTaken = true }
            try tx.updateProgress(stored)
            if stored.itemTaken && stored.chunks.isComplete { whole.append(row) }
            if let message = try tx.message(row) {
                events.append(.transferMoved(conversation: message.contact.conversation, id: message.id))
            }
        }
        return whole
    }

    /// Whether a message the relay took is an attachment (its Sent waits for the chunks).
    func isAttachment(_ row: MessageRowID, _ tx: StoreTransaction) throws -> Bool {
        try tx.attachment(message: row) != nil
    }

    // MARK: receiving

    /// A message item that is an attachment was stored (or came again): its file record,
    /// or, if it was discarded before, a fresh start (the sender resent it).
    func attachmentItemStored(_ conversation: LiveConversation, id: MessageID, _ attachment: Attachment,
                              _ tx: StoreTransaction) throws {
        guard let message = try tx.message(contact: conversation.contact.id, id: id), message.direction == .incoming else { return }
        if let stored = try tx.attachment(message: message.rowID) {
            if case .discarded = stored.state { try tx.restartReceiving(message: message.rowID) }
            return
        }
        try tx.insertAttachment(message: message.rowID, direction: .incoming, chunkCount: FileStream.chunkCount(size: attachment.size),
                                sentCopy: nil, workFile: "\(AttachmentFiles.partial)/\(conversation.contact.id.rawValue)-\(id.hex).part")
    }

    /// One chunk of a file being received: written to the partial file at its place (fsynced
    /// before the batch commits: `AfterCommit.partialFiles`), marked in the store; when it
    /// is the last one missing, the file is finished.
    func receiveChunk(_ body: [UInt8], id: MessageID, sealedIn session: [UInt8], in conversation: LiveConversation,
                      _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        let contact = conversation.contact
        guard !contact.isBlocked, !contact.isDeleted else { return }
        // Its item may be waiting in this batch: store it first.
        if after.incoming.contains(where: { $0.1.id == id && $0.0 === conversation }) { try storeIncoming(&after, tx) }
        guard let message = try tx.message(contact: contact.id, id: id), message.direction == .incoming,
              case .attachment(let attachment) = message.content,
              var stored = try tx.attachment(message: message.rowID) else {
            return rejectForged("a file chunk from \(contact.name) for no file it sent")
        }
        guard case .moving = stored.state else { return }  // whole already, or discarded: a late copy
        var r = ByteReader(body)
        guard let rawIndex = try? r.u32() else { return rejectForged("a file chunk from \(contact.name) without its index") }
        let index = Int(rawIndex)
        guard index < stored.chunks.count else { return rejectForged("a file chunk from \(contact.name) past the file's end") }
        guard !stored.chunks.contains(index) else { return }  // a copy: stored already
        if stored.chunks.doneCount > 0, chunksWrittenThisRun[message.rowID] == nil, attachmentsResumed.insert(message.rowID).inserted {
            log("receiving the rest of a file from \(contact.name): \(stored.chunks.doneCount) of \(stored.chunks.count) chunks were here")
        }
        var header: [UInt8]? = nil
        if index == 0 {
            guard let h = try? r.raw(FileStream.headerBytes) else { return rejectForged("a first file chunk from \(contact.name) without its header") }
            header = h
        }
        let expected = FileStream.plainBytes(ofChunk: index, size: attachment.size) + FileStream.overheadBytes
        guard r.remaining == expected, let chunk = try? r.raw(expected) else {
            return rejectForged("a file chunk from \(contact.name) of the wrong length")
        }
        let files = AttachmentFiles(home: account.locations.home)
        let file: OpenFile
        if let open = after.partialFiles[message.rowID] { file = open } else {
            _ = try files.directory(AttachmentFiles.partial)
            let path = files.absolute(stored.workFile)
            file = PrivateFiles.exists(path) ? try OpenFile.openOwn(path, writable: true) : try OpenFile.create(path)
            after.partialFiles[message.rowID] = file
        }
        if let header {
            try file.write(header, at: 0)
            stored.streamHeader = header
        }
        try file.write(chunk, at: FileStream.cipherOffset(ofChunk: index))
        stored.chunks.insert(index)
        chunksWrittenThisRun[message.rowID, default: 0] += 1
        try tx.updateProgress(stored)
        after.fileProgress[message.rowID] = (conversation, id, stored.chunks.doneCount, stored.chunks.isComplete)
        if !after.events.contains(.transferMoved(conversation: contact.id.conversation, id: id)) {
            after.events.append(.transferMoved(conversation: contact.id.conversation, id: id))
        }
        if stored.chunks.isComplete { try finishIncoming(message, attachment, stored, file, session: session, in: conversation, tx, &after) }
    }

    /// Every chunk is here: decrypt the partial file in order into `files/received/`,
    /// checking the hash; whole and checked, it is complete and its Delivered is owed.
    /// Otherwise it is discarded with a row, and reported as could not be read, so the
    /// sender's recovery resends it.
    private func finishIncoming(_ message: StoredMessage, _ attachment: Attachment, _ stored: StoredAttachment, _ partial: OpenFile,
                                session: [UInt8], in conversation: LiveConversation, _ tx: StoreTransaction,
                                _ after: inout AfterCommit) throws {
        let files = AttachmentFiles(home: account.locations.home)
        _ = try files.directory(AttachmentFiles.received)
        let target = files.freeName(AttachmentName.sanitised(attachment.name), in: AttachmentFiles.received)
        let outcome: Result<Void, EngineError> = Result { () throws(EngineError) in
            try Self.decrypt(partial, attachment, header: stored.streamHeader, into: files.absolute(target))
        }
        after.filesToRemove.append(files.absolute(stored.workFile))
        after.partialFiles[message.rowID] = nil
        let contact = conversation.contact
        switch outcome {
        case .success:
            try tx.completeReceiving(message: message.rowID, file: target)
            after.receiptsOwed += 1
            log("a file from \(contact.name) arrived whole (\(attachment.size) bytes, \(stored.chunks.count) chunks, \(chunksWrittenThisRun[message.rowID] ?? 0) written in this run)")
        case .failure(let error):
            unlink(files.absolute(target))
            let reason = "it did not match what \(contact.name) sent"
            log("a file from \(contact.name) was discarded: \(error)")
            try tx.discardReceiving(message: message.rowID, reason: reason)
            _ = try tx.addSystemRow(contact: contact.id, kind: RowKind.fileDiscarded,
                                    text: "\(attachment.name) from \(contact.name) could not be read and was discarded. \(contact.name) has been told, so they can send it again.",
                                    action: nil, messageIDs: [message.id], at: now)
            _ = try tx.recordUndecryptable(contact: contact.id, id: message.id, session: session, at: now)
            after.events.append(.rowAdded(conversation: contact.id.conversation))
        }
        after.events.append(.transferMoved(conversation: contact.id.conversation, id: message.id))
    }

    /// Decrypts the whole partial file into `path` (0600, fsynced) and checks its hash; any
    /// failure leaves nothing usable (the caller removes `path`).
    private static func decrypt(_ partial: OpenFile, _ attachment: Attachment, header: [UInt8]?, into path: String) throws(EngineError) {
        guard let header else { throw .crypto("no stream header") }
        var key = attachment.key
        let secret = SecretBytes(consuming: &key)
        var decryptor: FileStream.Decryptor
        do { decryptor = try FileStream.Decryptor(key: secret, header: header) } catch { throw .crypto(error.description) }
        let out = try OpenFile.create(path)
        var hash = StreamingHash()
        let count = FileStream.chunkCount(size: attachment.size)
        var offset: Int64 = 0
        for index in 0..<count {
            let length = FileStream.plainBytes(ofChunk: index, size: attachment.size) + FileStream.overheadBytes
            let chunk = try partial.read(count: length, at: FileStream.cipherOffset(ofChunk: index))
            var opened: Result<[UInt8], FileStream.OpenError> = .failure(.chunk(index: index))
            chunk.withUnsafeBytes { buf in
                do throws(FileStream.OpenError) { opened = .success(try decryptor.open(buf, final: index == count - 1)) } catch { opened = .failure(error) }
            }
            let plain: [UInt8]
            switch opened {
            case .success(let bytes): plain = bytes
            case .failure(let error): throw .crypto(error.description)
            }
            plain.withUnsafeBytes { hash.update($0) }
            try out.write(plain, at: offset)
            offset += Int64(plain.count)
        }
        guard UInt64(offset) == attachment.size, constantTimeEqual(hash.finish(), attachment.contentHash) else {
            throw .crypto("the file's hash does not match")
        }
        try out.sync()
    }

    /// Before the batch commits: what was written to partial files is on disk.
    func syncPartialFiles(_ after: inout AfterCommit) throws(EngineError) {
        for file in after.partialFiles.values { try file.sync() }
        after.partialFiles.removeAll()
    }

    // MARK: receipts for whole files

    /// Delivered receipts for whole files, in the sessions the contacts hold.
    func flushFileReceipts() throws(EngineError) {
        let owed = try AccountService.wrap { try store.contactsOwedFileReceipts() }
        for contactID in owed {
            guard let conversation = conversations[contactID], conversation.canSend, var saved = conversation.saved,
                  saved.peerHoldsSendingSession, let keys = saved.sendKeys,
                  let client = connections[conversation.relay]?.client else { continue }
            let ids = try AccountService.wrap { try store.fileReceiptsOwed(contact: contactID, limit: Self.receiptsPerFrame) }
                .filter { !conversation.fileReceiptsInFlight.contains($0) }
            guard !ids.isEmpty, client.hasRoom(), let sequence = saved.takeSendSequence() else { continue }
            let envelope = receiptEnvelope(.fileDelivered, ids, sequence: sequence, keys: keys, conversation: conversation)
            conversation.saved = saved
            guard (try? sendOnLink(conversation, .envelope(envelope), as: .fileReceipts(contactID, ids))) != nil else { continue }
            conversation.fileReceiptsInFlight.formUnion(ids)
        }
    }
}
