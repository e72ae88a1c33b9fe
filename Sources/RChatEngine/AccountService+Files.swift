import Foundation
import RChatCore
import RChatCrypto
import RChatStore
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
        try sendFile(to: contact(named: name), path: path, as: kind)
    }

    public func sendFile(to contact: Contact, path: String, as requested: AttachmentKind?) throws(EngineError) -> MessageID {
        guard contact.state != .request else {
            throw .usage("\(contact.name) is a message request: add their code to accept it before replying")
        }
        let (source, size) = try OpenFile.readUserFile(path)
        let name = AttachmentName.sanitised((path as NSString).lastPathComponent)
        let limit = UInt64(try Self.wrap { try EngineSettings(store: store) }.maxAttachmentMB) * 1_048_576
        guard size > 0 else { throw .usage("\(path) is empty: there is nothing to send") }
        guard size <= limit else {
            throw .usage("\(path) is \(size) bytes, over the limit of \(limit / 1_048_576) MB (rchat settings max-attachment-mb N changes it)")
        }
        let kind: AttachmentKind
        if let requested { kind = requested } else { kind = try Self.kind(of: source) }
        if kind == .photo, requested == .photo, !Self.isImage(try source.read(count: 16, at: 0)) {
            throw .usage("\(path) is not a photo rChat can read (JPEG or PNG): send it as a file")
        }

        let id = MessageID.fresh(clock)
        let files = attachmentFiles
        _ = try files.directory(AttachmentFiles.sent)
        let sentCopy = files.freeName(name, in: AttachmentFiles.sent)
        let key = FileStream.generateKey()
        let encryptor = FileStream.Encryptor(key: key)
        let header = encryptor.header, startState = encryptor.stateBytes
        let hash: [UInt8]
        let read: UInt64
        do {
            (hash, read) = try Self.copyOnce(source, size: size, to: files.absolute(sentCopy))
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
                    let row = try tx.insertOutgoing(contact: contact.id, id: id, content: .attachment(attachment), at: t,
                                                    keysFingerprint: Self.keysFingerprint(contact))
                    try tx.insertOutgoingAttachment(message: row, chunkCount: FileStream.chunkCount(size: read), sentCopy: sentCopy,
                                                    streamHeader: header, streamState: startState)
                    if contact.isBlocked || contact.state == .keysDontMatch {
                        try tx.raiseStatus(message: row, event: .gaveUp, at: t)
                        _ = try tx.removeFromOutbox(message: row)
                    }
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
    /// are encrypted as they go (`Engine.sendAttachment`), from this copy.
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

    /// Photo when the image decoders read it, else file (a voice message only when asked).
    static func kind(of file: OpenFile) throws(EngineError) -> AttachmentKind {
        isImage(try file.read(count: 16, at: 0)) ? .photo : .file
    }

    /// JPEG or PNG by their signatures.
    static func isImage(_ head: [UInt8]) -> Bool {
        head.starts(with: [0xFF, 0xD8, 0xFF]) || head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    /// `rchat save NAME ID PATH`: copies a whole attachment out (a path that does not exist
    /// yet, or a directory to put it in under its name). Returns the path written.
    public func saveAttachment(_ contact: Contact, id: MessageID, to path: String) throws(EngineError) -> String {
        guard let message = try Self.wrap({ try store.message(contact: contact.id, id: id) }) else {
            throw .usage("no message \(id.hex) with \(contact.name) (see rchat list \(contact.name))")
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
