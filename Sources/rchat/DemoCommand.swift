import Foundation
import RChatCore
import RChatEngine
import RChatRelay
import RChatTUI
#if canImport(Glibc)
import Glibc
#endif

/// `rchat demo`: everything in one process, under a temporary folder removed on exit — a
/// relay on a free loopback port, a demo contact "Sam" whose engine runs on its own thread
/// and answers by itself, and a demo account "You" — then the full-screen view, open on Sam.
/// The real home is never touched.
enum DemoCommands {
    static let command = Command(
        name: "demo", usage: "rchat demo",
        summary: "Try rChat in one command: a relay and a demo contact, Sam, in this process; opens the view.",
        details: """
        Everything lives in a temporary folder that is removed on exit; your own account is
        never touched. Sam reads what you send after a moment and replies, so you can watch a
        message go Sending, Sent, Delivered and Read. Commands only the demo has (also in the
        help overlay, F1): /offline and /online, /reinstall (the Resent path), /newphone (the
        Not delivered + Resend path) and /verify.
        """
    ) { args, _ in
        try args.expectPositionals(max: 0)
        try TUICommand.requireTerminal()
        let demo = try Demo()
        let status = demo.run()
        exit(status)
    }
}

final class Demo {
    let root: String
    private let relay: Relay
    private let relayStopped = DispatchSemaphore(value: 0)
    private let log: Logger
    let sam: DemoContact

    init() throws(EngineError) {
        var template = Array((NSTemporaryDirectory() + "/rchat-demo-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw .io("cannot make a temporary folder for the demo") }
        root = String(cString: made)
        log = LogFile.logger(path: "\(root)/demo.log")
        let log = self.log
        var configuration = RelayConfiguration(keyFile: "\(root)/relay.key")
        configuration.host = "127.0.0.1"
        configuration.port = 0
        do {
            relay = try Relay(configuration: configuration, log: log.prefixed("rchat-relay: "))
        } catch {
            try? FileManager.default.removeItem(atPath: root)
            throw .io("the demo relay cannot start: \(error.description)")
        }
        let relay = self.relay, stopped = relayStopped
        let thread = Thread {
            do { try relay.run() } catch { log.error("the demo relay stopped: \(error)") }
            stopped.signal()
        }
        thread.name = "rchat-demo-relay"
        thread.start()
        sam = DemoContact(root: "\(root)/sam", you: Locations(home: "\(root)/you/data", deviceDirectory: "\(root)/you/device"), log: log)
        do {
            try setUpAccounts()
        } catch {
            shutDown()
            throw error
        }
    }

    var you: Locations { sam.you }

    /// Both accounts on the demo relay, each with the other's code pinned, and Sam online.
    private func setUpAccounts() throws(EngineError) {
        try AccountService.create(at: you, name: "You", relay: relay.address)
        try AccountService.create(at: sam.locations, name: "Sam", relay: relay.address)
        let me = try AccountService(locations: you)
        let other = try AccountService(locations: sam.locations)
        _ = try me.addContact(try other.contactCode(), name: nil)
        _ = try other.addContact(try me.contactCode(), name: nil)
        // Receipts at once: the demo is about watching them arrive.
        try me.setSetting(.receiptWindow, "0")
        // No desktop alerts: the demo's folder is deleted on quit, so an alert clicked
        // later would open nothing, and `rchat settings` would change the real account.
        try me.setSetting(.desktopAlerts, "off")
        try other.setSetting(.receiptWindow, "0")
        _ = try other.send(to: "You", content: .text(DemoContact.greeting))
        _ = sam.goOnline()
    }

    func run() -> Int32 {
        defer { shutDown() }
        let session: ViewSession
        do {
            session = try ViewSession(locations: you, logPath: "\(root)/you.log")
        } catch {
            warn("\(error)")
            return 1
        }
        let model = session.model
        let sam = self.sam
        let commands = [
            DemoCommand(name: "offline", help: "Sam goes offline: what you send waits at the relay (Sent)") { _ in
                sam.goOffline()
            },
            DemoCommand(name: "online", help: "Sam comes back online and picks up what waited") { _ in
                sam.goOnline()
            },
            DemoCommand(name: "reinstall", help: "Sam reinstalls rChat on the same phone: held messages are resent by themselves (Resent). Go /offline and send something first",
                        running: { _ in sam.reinstall(newPhone: false) }),
            DemoCommand(name: "newphone", help: "Sam moves to a new phone: held messages are Not delivered; r on the row Resends them to it, and what you write goes there too. Only the automatic resend waits for /verify. /offline and send first",
                        running: { _ in sam.reinstall(newPhone: true) }),
            DemoCommand(name: "verify", help: "Enter Sam's code again: pins the key of Sam's new phone, so rChat resends to it by itself again") { _ in
                guard let code = sam.currentCode() else { return "Sam's code cannot be read right now; try again in a moment." }
                do throws(ChatModelError) {
                    _ = try model.addContact(code: code)
                    return "Sam's code entered again: Sam's current phone key is pinned."
                } catch {
                    return error.description
                }
            },
        ]
        return session.run(TUIOptions(demoCommands: commands, openAtStart: "Sam"))
    }

    private func shutDown() {
        sam.shutDown()
        relay.stop()
        _ = relayStopped.wait(timeout: .now() + 5)
        try? FileManager.default.removeItem(atPath: root)
    }
}

/// The demo's Sam: an account under the demo folder, its engine on a thread of its own, and
/// an auto-responder driven by that engine's events. Everything Sam does runs on one serial
/// queue, so going offline, reinstalling and replying never overlap.
///
/// `@unchecked Sendable`: the mutable state is touched only on `queue`, a serial queue that
/// also runs Sam's delayed replies (work, not just a lock, so a `Mutex` cannot replace it);
/// Swift cannot see that confinement.
final class DemoContact: @unchecked Sendable {
    static let greeting = "Hi, I'm Sam, a demo contact living inside this process. Write me something and watch its status change beside it: Sending, Sent, Delivered, then Read. F1 shows the keys."

    private let root: String
    private let log: Logger
    private let queue = DispatchQueue(label: "rchat-demo-sam")
    private var runner: EngineThread?
    private var device = 1
    private var generation = 0
    private var replyPending = false
    /// What Sam has heard since his last reply, and what happened to him meanwhile: what
    /// his next reply is about.
    private var heardSinceReply: [MessageID] = []
    private var history = SamsAnswer.History()
    /// Where the demo's own account lives: Sam looks at what You sent (when it was
    /// written, whether it was resent) to answer what actually happened.
    let you: Locations

    init(root: String, you: Locations, log: Logger) {
        self.root = root
        self.you = you
        self.log = log.prefixed("sam: ")
    }

    var locations: Locations { Locations(home: "\(root)/data", deviceDirectory: "\(root)/device-\(device)") }

    // MARK: commands (from the UI thread)

    func goOnline() -> String? {
        queue.sync {
            guard runner == nil else { return "Sam is already online." }
            return start() ? "Sam is online again." : "Sam cannot start; see demo.log."
        }
    }

    func goOffline() -> String? {
        queue.sync {
            guard runner != nil else { return "Sam is already offline." }
            stop()
            history.wentOffline(at: Date())
            return "Sam is offline: what you send now waits at the relay (Sent). /online, /reinstall or /newphone next."
        }
    }

    /// Export, delete the data, import again (with the same or a new device directory),
    /// start: in the background, since sealing the export takes a moment. The line for the
    /// status bar stays until that is done.
    func reinstall(newPhone: Bool) -> DemoReply {
        let task = DemoTask()
        queue.async { [self] in
            defer { task.finish() }
            stop()
            history.wentOffline(at: Date())
            history.lastChange = newPhone ? .newPhone : .reinstalled
            let backup = "\(root)/sam.backup"
            let passphrase = UUID().uuidString
            do {
                try AccountService(locations: locations).export(to: backup, passphrase: passphrase)
                try FileManager.default.removeItem(atPath: locations.home)
                if newPhone { device += 1 }
                try AccountService.restore(at: locations, from: backup, passphrase: passphrase)
                try? FileManager.default.removeItem(atPath: backup)
                let account = try AccountService(locations: locations)
                try account.setSetting(.receiptWindow, "0")
                _ = try account.send(to: "You", content: .text(newPhone
                    ? "I'm on a new phone now. What you sent while I was away could not be read here: select the row and press r to Resend it to this phone. Until /verify pins its key, rChat resends nothing to it by itself."
                    : "I reinstalled rChat on the same phone. What you sent while I was away was sent again by itself: look for Resent."))
            } catch {
                log.error("reinstall failed: \(error)")
            }
            _ = start()
        }
        return DemoReply(text: newPhone ? "Sam is moving to a new phone (export, import on an empty device)…"
                                        : "Sam is reinstalling rChat on the same phone (export, delete, import)…", task: task)
    }

    /// Sam's contact code as it is now (after /newphone it carries the new device key).
    func currentCode() -> String? {
        queue.sync { try? AccountService(locations: locations).contactCode().text }
    }

    func shutDown() {
        queue.sync { stop() }
    }

    // MARK: on the queue

    private func start() -> Bool {
        do {
            let account = try AccountService(locations: locations)
            let engine = try Engine(account: account, log: log)
            generation += 1
            let generation = self.generation
            let you = try account.contact(named: "You").id.conversation
            engine.onEvent = { [weak self] event in
                if case .newMessage(let conversation, let id, _, _, _) = event, conversation == you { self?.heard(id, generation) }
            }
            let runner = EngineThread(engine: engine)
            runner.start(name: "rchat-demo-sam")
            self.runner = runner
            history.cameOnline(at: Date())
            return true
        } catch {
            log.error("cannot start: \(error)")
            return false
        }
    }

    private func stop() {
        generation += 1
        runner?.stop()
        runner = nil
    }

    /// A message from You: after a moment Sam reads it, a moment later Sam answers what
    /// he heard since his last answer.
    private func heard(_ id: MessageID, _ generation: Int) {
        queue.async { [self] in
            heardSinceReply.append(id)
            guard !replyPending else { return }
            replyPending = true
            queue.asyncAfter(deadline: .now() + 1.5) { [self] in
                guard generation == self.generation, let account = try? AccountService(locations: locations) else {
                    replyPending = false
                    return
                }
                _ = try? account.markRead("You")
                runner?.engine.wake()
                queue.asyncAfter(deadline: .now() + 1.5) { [self] in
                    replyPending = false
                    guard generation == self.generation, let account = try? AccountService(locations: locations) else { return }
                    _ = try? account.markRead("You")
                    let reply = SamsAnswer.text(for: heardMessages(account), history: &history)
                    heardSinceReply = []
                    _ = try? account.send(to: "You", content: .text(reply))
                    runner?.engine.wake()
                }
            }
        }
    }

    /// What Sam heard since his last reply, each with what You's side knows of it.
    private func heardMessages(_ account: AccountService) -> [SamsAnswer.Heard] {
        let wanted = Set(heardSinceReply)
        let mine = (try? account.conversation("You", limit: 200)) ?? []
        let theirs = (try? AccountService(locations: you).conversation("Sam", limit: 200)) ?? []
        var sent: [MessageID: MessageItem] = [:]
        for case .message(let item) in theirs where item.direction == .outgoing { sent[item.id] = item }
        return mine.compactMap { item -> SamsAnswer.Heard? in
            guard case .message(let message) = item, message.direction == .incoming, wanted.contains(message.id) else { return nil }
            return SamsAnswer.Heard(content: message.content, writtenAt: sent[message.id].map { Date(timeIntervalSince1970: TimeInterval($0.at)) },
                                   resentAutomatically: sent[message.id]?.resent ?? false)
        }
    }
}

/// What Sam answers: what he heard, and how it reached him, from what actually happened
/// (when You wrote it against when Sam was offline, a reinstall or new phone, a Resent
/// marker), then one tip about what the user has not tried yet.
struct SamsAnswer {
    struct Heard {
        var content: MessageContent
        /// When You wrote it (from You's own store); nil if it cannot be read.
        var writtenAt: Date?
        var resentAutomatically: Bool
    }

    enum Change { case none, reinstalled, newPhone }

    /// What Sam went through, and which tips he gave.
    struct History {
        var offline: [(from: Date, to: Date?)] = []
        var lastChange = Change.none {
            didSet { if lastChange != .none { changedDevice = true } }
        }
        /// Whether Sam ever reinstalled or moved to a new phone.
        private(set) var changedDevice = false
        var tipsGiven: Set<Tip> = []

        mutating func wentOffline(at date: Date) {
            if offline.last?.to == nil, !offline.isEmpty { return }
            offline.append((date, nil))
        }

        mutating func cameOnline(at date: Date) {
            if let last = offline.indices.last, offline[last].to == nil { offline[last].to = date }
        }

        /// Whether Sam was offline when `date` was.
        func wasOffline(at date: Date) -> Bool {
            offline.contains { date >= $0.from.addingTimeInterval(-1) && date <= ($0.to ?? .distantFuture) }
        }
    }

    /// Tips, each given once, and only about what the user has not done yet.
    enum Tip: CaseIterable {
        case timeline, offline, recovery, quit

        var text: String {
            switch self {
            case .timeline: "Select a message with Tab and Up, then press i: its status timeline, each step with its time."
            case .offline: "Try /offline, then send me something: it stays Sent at the relay until /online brings me back."
            case .recovery: "Recovery: /offline, send a message, then /reinstall (it is resent by itself) or /newphone (it shows Not delivered; press r on the row to Resend)."
            case .quit: "Quit with Ctrl-Q: this demo's folder, with both our accounts, is deleted then; your own account was never touched."
            }
        }

        func applies(_ history: History) -> Bool {
            switch self {
            case .timeline, .quit: true
            case .offline: history.offline.isEmpty
            case .recovery: !history.changedDevice
            }
        }
    }

    static func text(for heard: [Heard], history: inout History) -> String {
        var parts: [String] = []
        let what: String
        if heard.count == 1, let one = heard.first {
            what = describe(one.content)
        } else {
            what = "your \(heard.count) messages"
        }
        let waited = heard.contains { $0.writtenAt.map(history.wasOffline) ?? false }
        let resent = heard.contains(where: \.resentAutomatically)
        switch history.lastChange {
        case .reinstalled where resent:
            parts.append("Got \(what) on my reinstalled rChat: it could not be read here after the reinstall, so your rChat sent it again by itself (Resent).")
        case .reinstalled:
            parts.append("Got \(what) on my reinstalled rChat.")
        case .newPhone:
            parts.append("Got \(what) on my new phone.")
        case .none where waited:
            parts.append("Got \(what). I was offline when you wrote \(heard.count == 1 ? "it" : "them"): the relay held \(heard.count == 1 ? "it" : "them") (Sent) and handed \(heard.count == 1 ? "it" : "them") over when I came back, then my phone stored \(heard.count == 1 ? "it" : "them") (Delivered) and I read \(heard.count == 1 ? "it" : "them") (Read).")
        case .none:
            parts.append("Got \(what)! \(heard.count == 1 ? "It" : "Each") went Sending, then Sent (the relay took it), then Delivered (my phone stored it), then Read (I looked at it).")
        }
        history.lastChange = .none
        if let tip = Tip.allCases.first(where: { !history.tipsGiven.contains($0) && $0.applies(history) }) {
            parts.append(tip.text)
            history.tipsGiven.insert(tip)
        }
        return parts.joined(separator: " ")
    }

    /// "“hello”" (cut at 40 characters), "your photo", "your voice message", "your file".
    static func describe(_ content: MessageContent) -> String {
        switch content {
        case .text, .reply:
            let text = content.writtenText ?? ""
            let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            return "\u{201C}" + (line.count > 40 ? line.prefix(40) + "\u{2026}" : line) + "\u{201D}"
        case .attachment(let attachment):
            switch attachment.kind {
            case .photo: return "your photo"
            case .voice: return "your voice message"
            case .file: return "your file"
            }
        case .control, .newer, .unsent: return "that"
        }
    }
}
