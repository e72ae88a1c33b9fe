import Foundation
import RChatCore
import RChatCrypto
import RChatStore
import RChatMedia
#if canImport(Glibc)
import Glibc
#endif

/// Attachments: sending a file, saving one out (docs/ARCHITECTURE.md, "Content").
extension AccountService {
    var attachmentFiles: AttachmentFiles { AttachmentFiles(home: locations.home) }

    /// `rchat send NAME --file PATH`, `/file`, `/photo`, a voice message: the file is read
    /// once, into an encrypted copy to send (`files/outgoing/`) and a plain copy to keep
    /// (`files/sent/`), and queued with its message in one transaction. Bad input is one
    /// line and nothing is stored.
    public func sendFile(to name: String, path: String, as kind: AttachmentKind?) throws(EngineError) -> MessageID {
        switch try target(named: name) {
        case .group(let group): try sendFile(toGroup: group, path: path, as: kind)
        case .contact(let contact): try sendFile(to: contact, path: path, as: kind)
        }
    }

    public func sendFile(to contact: Contact, path: String, as requested: AttachmentKind?) throws(EngineError) -> MessageID {
        guard contact.state != .request else {
            throw .usage("\(contact.name) is a message request: add their code to accept it before replying")
        }
        return try queueFile(path: path, as: requested) { tx, id, content, t throws in
            let row = try tx.insertOutgoing(contact: contact.id, id: id, content: content, at: t, keysFingerprint: Self.keysFingerprint(contact))
            try tx.setExpiry(message: row, after: tx.conversationTimer(contact: contact.id).timer)
            return row
        } after: { tx, row, t throws in
            try Self.failIfRefused(row, to: contact, at: t, tx)
        }
    }

    /// `rchat send GROUP --file PATH`: one copy kept, one encrypted stream; each current member
    /// gets its item and chunks over their own channel, each delivery on its own.
    public func sendFile(toGroup group: StoredGroup, path: String, as requested: AttachmentKind?) throws(EngineError) -> MessageID {
        try requireWritable(group)
        return try queueFile(path: path, as: requested) { tx, id, content, t throws in
            try insertGroupOutgoing(group, id: id, content: content, at: t, tx)
        } after: { _, _, _ in }
    }

    /// A file read once into its sent copy, then queued with its message (`insert`, which
    /// writes the message and its deliveries; `after`, once its attachment row is there) in
    /// one transaction. Bad input is one line and nothing is stored.
    private func queueFile(path: String, as requested: AttachmentKind?,
                           insert: (StoreTransaction, MessageID, MessageContent, Int64) throws -> MessageRowID,
                           after: (StoreTransaction, MessageRowID, Int64) throws -> Void) throws(EngineError) -> MessageID {
        let (source, size) = try OpenFile.readUserFile(path)
        let name = AttachmentName.sanitised((path as NSString).lastPathComponent)
        let limits = AttachmentLimits(maximumMB: UInt64(try Self.wrap { try EngineSettings(store: store) }.maxAttachmentMB))
        if let refusal = limits.check(size: size).message(name: path) { throw .usage(refusal) }

        let id = MessageID.fresh(clock)
        let files = attachmentFiles
        _ = try files.directory(AttachmentFiles.sent)
        let sentCopy = files.freeName(name, in: AttachmentFiles.sent)
        let key = FileStream.generateKey()
        let encryptor = FileStream.Encryptor(key: key)
        let header = encryptor.header, startState = encryptor.stateBytes
        let hash: [UInt8]
        let read: UInt64
        let kind: AttachmentKind
        do {
            (hash, read) = try Self.copyOnce(source, size: size, to: files.absolute(sentCopy))
            kind = try Self.kind(of: files.absolute(sentCopy), requested: requested, shownAs: path)
        } catch {
            unlink(files.absolute(sentCopy))
            throw error
        }
        let attachment = Attachment(kind: kind, name: name, size: read, contentHash: hash,
                                    key: key.withBytes { Array(UnsafeBufferPointer(start: $0, count: key.count)) })
        let t = clock.now()
        let stored: Result<Void, EngineError> = Result { () throws(EngineError) in
            try Self.wrap {
                try store.transaction { tx in
                    let row = try insert(tx, id, .attachment(attachment), t)
                    try tx.insertOutgoingAttachment(message: row, chunkCount: FileStream.chunkCount(size: read), sentCopy: sentCopy,
                                                    streamHeader: header, streamState: startState)
                    try after(tx, row, t)
                }
            }
        }
        if case .failure(let error) = stored {
            unlink(files.absolute(sentCopy))
            throw error
        }
        WakeSignal.poke(home: locations.home)
        return id
    }

    /// Reads `source` once into the sent copy (fsynced); returns the plaintext's hash and
    /// how many bytes were read (a file that changed size while read is refused). Its chunks
    /// are encrypted as they go (`Transfers.sendAttachment`), from this copy.
    private static func copyOnce(_ source: OpenFile, size: UInt64, to copy: String) throws(EngineError) -> ([UInt8], UInt64) {
        let plain = try OpenFile.create(copy)
        var hash = StreamingHash()
        var offset: UInt64 = 0
        while offset < size {
            let want = Int(min(UInt64(1 << 20), size - offset))
            let part = try source.read(count: want, at: Int64(offset))
            guard part.count == want else { throw .io("\(source.path) changed while it was read; send it again") }
            part.withUnsafeBytes { hash.update($0) }
            try plain.write(part, at: Int64(offset))
            offset += UInt64(want)
        }
        guard try source.read(count: 1, at: Int64(offset)).isEmpty else {
            throw .io("\(source.path) changed while it was read; send it again")
        }
        try plain.sync()
        return (hash.finish(), offset)
    }

    /// What the copy is sent as: asked for, it must be one (a photo the image decoders read,
    /// a voice message in Ogg Opus); else a photo when the decoders read it, else a file.
    static func kind(of copy: String, requested: AttachmentKind?, shownAs path: String) throws(EngineError) -> AttachmentKind {
        let isPhoto = (try? Images.probe(path: copy)) != nil
        switch requested {
        case .photo?:
            guard isPhoto else { throw .usage("\(path) is not a photo rChat can read (JPEG or PNG): send it as a file") }
            return .photo
        case .voice?:
            guard VoiceNote.isOggOpus(path: copy) else { throw .usage("\(path) is not a voice message (Ogg Opus): send it as a file") }
            return .voice
        case .file?:
            return .file
        case nil:
            return isPhoto ? .photo : .file
        }
    }

    /// `rchat save NAME ID PATH`: copies a whole attachment out (a path that does not exist
    /// yet, or a directory to put it in under its name). Returns the path written.
    public func saveAttachment(_ contact: Contact, id: MessageID, to path: String) throws(EngineError) -> String {
        try saveAttachment(.contact(contact), id: id, to: path)
    }

    /// `rchat save NAME ID PATH`, NAME a contact's or a group's.
    public func saveAttachment(named name: String, id: MessageID, to path: String) throws(EngineError) -> String {
        try saveAttachment(target(named: name), id: id, to: path)
    }

    public func saveAttachment(_ target: ConversationTarget, id: MessageID, to path: String) throws(EngineError) -> String {
        let name = target.name
        guard let message = try Self.wrap({ try store.message(conversation: target.conversation, id: id) }) else {
            throw .usage("no message \(id.hex) in \(name) (see rchat list \(name))")
        }
        guard case .attachment(let attachment) = message.content else { throw .usage("message \(id.hex) is not a file") }
        guard let stored = try Self.wrap({ try store.attachment(message: message.rowID) }) else {
            throw .usage("message \(id.hex) is not a file")
        }
        let source: String
        switch (stored.direction, stored.state) {
        case (.outgoing, _):
            guard let copy = stored.sentCopy else { throw .usage("the sent copy of \(attachment.name) is gone") }
            source = copy
        case (.incoming, .complete(let file)): source = file
        case (.incoming, .moving): throw .usage("\(attachment.name) has not fully arrived yet")
        case (.incoming, .discarded(let reason)): throw .usage("\(attachment.name) was discarded: \(reason)")
        }
        var isDirectory: ObjCBool = false
        var target = path
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            target = (path as NSString).appendingPathComponent(AttachmentName.sanitised(attachment.name))
        }
        let (input, size) = try OpenFile.readUserFile(attachmentFiles.absolute(source))
        guard !PrivateFiles.exists(target) else { throw .usage("\(target) already exists; choose a new file name") }
        let output = try OpenFile.create(target)
        var offset: UInt64 = 0
        while offset < size {
            let part = try input.read(count: 1 << 20, at: Int64(offset))
            if part.isEmpty { break }
            try output.write(part, at: Int64(offset))
            offset += UInt64(part.count)
        }
        try output.sync()
        return target
    }
}
