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
        help overlay, ?): /offline and /online, /reinstall (the Resent path), /newphone (the
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
        sam = DemoContact(root: "\(root)/sam", log: log)
        do {
            try setUpAccounts()
        } catch {
            shutDown()
            throw error
        }
    }

    var you: Locations { Locations(home: "\(root)/you/data", deviceDirectory: "\(root)/you/device") }

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
            DemoCommand(name: "reinstall", help: "Sam reinstalls rChat on the same phone: held messages are resent by themselves (Resent). Go /offline and send something first") { _ in
                sam.reinstall(newPhone: false)
            },
            DemoCommand(name: "newphone", help: "Sam moves to a new phone: held messages are Not delivered; r on the row Resends them to it, and what you write goes there too. Only the automatic resend waits for /verify. /offline and send first") { _ in
                sam.reinstall(newPhone: true)
            },
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
    static let greeting = "Hi, I'm Sam, a demo contact living inside this process. Write me something and watch its status change beside it: Sending, Sent, Delivered, then Read. Press ? for the keys."

    static let replies = [
        "Got it! Your message went Sending, then Sent (the relay took it), then Delivered (my phone stored it), then Read (I looked at it).",
        "Select a message with Tab and Up, then press i: its status timeline, each step with its time.",
        "Try /offline, then send me something: it stays Sent at the relay until /online brings me back.",
        "Recovery: /offline, send a message, then /reinstall (it is resent by itself) or /newphone (press r on the row to Resend; /verify pins the new phone).",
        "Nice to hear from you. Quit with Ctrl-Q; the demo cleans up after itself.",
    ]

    private let root: String
    private let log: Logger
    private let queue = DispatchQueue(label: "rchat-demo-sam")
    private var runner: EngineThread?
    private var device = 1
    private var generation = 0
    private var replyPending = false
    private var nextReply = 0

    init(root: String, log: Logger) {
        self.root = root
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
            return "Sam is offline: what you send now waits at the relay (Sent). /online, /reinstall or /newphone next."
        }
    }

    /// Export, delete the data, import again (with the same or a new device directory),
    /// start: in the background, since sealing the export takes a moment.
    func reinstall(newPhone: Bool) -> String? {
        queue.async { [self] in
            stop()
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
        return newPhone ? "Sam is moving to a new phone (export, import on an empty device)…"
                        : "Sam is reinstalling rChat on the same phone (export, delete, import)…"
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
                if case .newMessage(let conversation, _, _) = event, conversation == you { self?.heard(generation) }
            }
            let runner = EngineThread(engine: engine)
            runner.start(name: "rchat-demo-sam")
            self.runner = runner
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

    /// A message from You: after a moment Sam reads it, a moment later Sam answers.
    private func heard(_ generation: Int) {
        queue.async { [self] in
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
                    _ = try? account.send(to: "You", content: .text(Self.replies[nextReply % Self.replies.count]))
                    nextReply += 1
                    runner?.engine.wake()
                }
            }
        }
    }
}
