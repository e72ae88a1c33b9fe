import Foundation
import Glibc
import RChatCore
import RChatMedia

/// A voice message being recorded: the recorder process, the private folder its files are
/// in (in the account home), and the conversation it goes to.
final class ActiveRecording {
    let recording: Recording
    let directory: String
    let conversation: ConversationID

    init(recording: Recording, directory: String, conversation: ConversationID) {
        self.recording = recording; self.directory = directory; self.conversation = conversation
    }
}

/// What needs RChatMedia: photos' previews, playing a voice message, recording one.
extension ChatView {
    /// The previews of the complete photos that may be on screen (the anchor's item and a
    /// pane's worth above it), from the cache; the ones not rendered yet are asked for.
    func refreshPreviews(_ pane: ConversationPane) {
        guard let window = state.window, !window.items.isEmpty,
              let mode = PreviewStyle.mode(environment: options.environment, rows: state.rows, columns: state.columns,
                                           unicode: state.glyphs.isUnicode, cell: terminalTraits.cell,
                                           terminfoTrueColor: terminalTraits.trueColor) else {
            if !state.previews.isEmpty { state.previews = [:] }
            return
        }
        let box = pane.previewBox
        let bottom = min(state.anchor?.item ?? window.end - 1, window.end - 1)
        let top = max(window.start, bottom - pane.height)
        var shown: [MessageID: ShownPreview] = [:]
        for index in top...max(top, bottom) {
            guard case .message(let m)? = window.item(at: index), case .attachment(let a) = m.content, a.kind == .photo,
                  case .complete(let path)? = m.transfer else { continue }
            if let preview = previewCache.preview(of: m.id, path: path, columns: box.columns, rows: box.rows, mode: mode,
                                                  cell: mode.isGraphics ? terminalTraits.cell : nil) {
                shown[m.id] = preview
            }
        }
        if shown != state.previews { state.previews = shown }
    }

    /// How long the complete voice messages loaded are, read once each from their files off
    /// the UI thread (`VoiceLengths`); one still being read, or that does not read, has none
    /// yet (the frame after it was read shows it).
    func refreshDurations() {
        for item in state.window?.items ?? [] {
            guard case .message(let m) = item, case .attachment(let a) = m.content, a.kind == .voice,
                  case .complete(let path)? = m.transfer, state.durations[m.id] == nil else { continue }
            if case .seconds(let seconds) = voiceLengths.length(of: m.id, path: path) { state.durations[m.id] = seconds }
        }
    }

    /// Readable when a preview was rendered: the backend draws a frame then.
    public var previewDescriptor: Int32 { previewCache.wakeDescriptor }

    /// The backend saw `previewDescriptor` readable.
    public func previewsRendered() {
        thread.check()
        previewCache.drain()
    }

    /// A private folder (0700) in the account home for a voice message's files, or nil
    /// having said why not.
    private func temporaryFolder(_ prefix: String, doing: String) -> String? {
        guard let home = options.draftDirectory else {
            say("Cannot \(doing) here: this view has no account home to keep the sound in.", error: true)
            return nil
        }
        var template = Array("\(home)/\(prefix)XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            say("Cannot \(doing): no folder for it in the account home (\(String(cString: strerror(errno)))).", error: true)
            return nil
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    static let playPrefix = ".rchat-play-"
    static let recordPrefix = ".rchat-voice-"

    /// Removes what a view that ended abruptly left of its voice messages in the account
    /// home (called under the engine lock, when no other view runs there).
    public static func removeLeftovers(in home: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: home)) ?? []
        for name in names where name.hasPrefix(playPrefix) || name.hasPrefix(recordPrefix) {
            try? FileManager.default.removeItem(atPath: "\(home)/\(name)")
        }
    }

    /// `p`: a voice message decoded to a WAV in a private folder of the account home and
    /// played by `pw-play` or `aplay`, started on its own; the folder goes when it ends.
    func playAttachment() {
        guard let (_, m, a, path) = selectedCompleteAttachment("played") else { return }
        guard a.kind == .voice else { return say("Only a voice message can be played; o opens the others.") }
        // Its length, as read off the UI thread: one that is not read yet or does not read
        // is not decoded here either.
        let seconds: Double
        switch voiceLengths.length(of: m.id, path: path) {
        case .seconds(let s): seconds = s
        case .reading: return say("Reading the voice message: press p again in a moment.")
        case .unreadable: return say("Cannot play it: it is not a voice message rChat can read.", error: true)
        }
        guard seconds <= Double(VoiceNote.maximumPlaySeconds) else {
            return say("Cannot play it: it is longer than \(VoiceNote.maximumPlaySeconds / 3600) hours.", error: true)
        }
        guard let player = AudioTools.player(of: "-", environment: options.environment) else {
            return say("No player here: install pipewire (pw-play) or alsa-utils (aplay).", error: true)
        }
        // Decoded into a pipe the player reads, on a thread of its own: nothing is written
        // to disk, and the decoding goes at the player's pace.
        let pipe = Pipe()
        guard let process = Launch.detached([player.executable] + player.arguments, input: pipe.fileHandleForReading) else {
            return say("Could not start \(player.executable).", error: true)
        }
        try? pipe.fileHandleForReading.close()
        let output = pipe.fileHandleForWriting
        Thread.detachNewThread {
            try? VoiceNote.stream(ogg: path, to: output.fileDescriptor)
            try? output.close()
        }
        say("Playing the voice message (\(TimeText.length(seconds))).", lasts: .playing(Playback(process)))
    }

    /// `/voice`: records from the default input through `pw-record` or `arecord` until
    /// Enter (sends) or Esc (cancels).
    func startRecording() {
        guard let conversation = state.openConversation else {
            return say("Open a conversation first: Tab to the list, then Enter.", error: true)
        }
        guard let folder = temporaryFolder(Self.recordPrefix, doing: "record") else { return }
        let wav = folder + "/recording.wav"
        guard let tool = AudioTools.recorder(to: wav, environment: options.environment) else {
            try? FileManager.default.removeItem(atPath: folder)
            return say("No recorder here: install pipewire (pw-record) or alsa-utils (arecord).", error: true)
        }
        do {
            recorder = ActiveRecording(recording: try Recording(tool: tool, path: wav), directory: folder, conversation: conversation)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            return say("Cannot record: \(error.description)", error: true)
        }
        state.prompt = .recording(conversation: conversation, since: state.now)
    }

    func recordingKey(_ key: Key) {
        switch key {
        case .enter, .control("j"): finishRecording()
        // Esc read together with the next key arrives as Alt with it: Esc.
        case .escape, .alt, .control("g"), .control("c"), .control("q"):
            cancelRecording()
            say("Recording cancelled: nothing was sent.")
        default: say("Recording: Enter sends it, Esc cancels.")
        }
    }

    /// Enter: the recorder stops, the sound is encoded (Ogg Opus) and sent as a voice
    /// message; its files go whatever happens.
    func finishRecording() {
        guard let active = recorder else { state.prompt = nil; return }
        recorder = nil
        state.prompt = nil
        defer { try? FileManager.default.removeItem(atPath: active.directory) }
        let seconds: Double
        let ogg = active.directory + "/voice-message.ogg"
        do {
            let wav = try active.recording.finish()
            seconds = try VoiceNote.encode(wav: wav, to: ogg)
        } catch {
            return say("The recording could not be made: \(error.description)", error: true)
        }
        let id: MessageID
        do {
            id = try model.sendFile(to: active.conversation, path: ogg, as: .voice)
        } catch {
            return say(error.description, error: true)
        }
        say("Sending a voice message (\(TimeText.length(seconds))).", lasts: .sending(id))
        if active.conversation == state.openConversation {
            goToNewest()
            state.window?.syncTail(model: model)
        }
    }

    /// Stops a recording under way, keeping nothing of it (Esc, quitting, the terminal gone).
    public func cancelRecording() {
        thread.check()
        guard let active = recorder else { return }
        recorder = nil
        if case .recording? = state.prompt { state.prompt = nil }
        active.recording.cancel()
        try? FileManager.default.removeItem(atPath: active.directory)
    }
}
