import Foundation
import RChatCore
import RChatEngine
import RChatTUI
#if canImport(Glibc)
import Glibc
#endif

/// `rchat` with no command: the full-screen view over the account, with the engine running
/// beside it in the same process. `rchat demo` is in DemoCommand.swift.
enum TUICommand {
    /// Matched when no command is given (or only options such as --home).
    static let view = Command(
        name: "", usage: "rchat [--home DIR] [--device-dir DIR] [--open NAME]",
        summary: "Open the full-screen view (the engine runs while it is open; F1 lists the keys).",
        details: """
        Takes the account's engine lock, like `rchat sync`: only one of them runs on a home at
        a time. The engine's log goes to view.log in the home directory, not to the screen.
        --open NAME opens that conversation (a clicked alert asks for its own through the
        store instead, so that no command line names the contact).
        """,
        options: [.text("--open", "NAME", help: "open this conversation (a contact's or a group's)")]
    ) { args, locations in
        try args.expectPositionals(max: 0)
        let open = args.value("--open")
        if let open {   // unknown: one line, exit 2
            let account = try AccountService(locations: locations)
            if try account.groupIfNoContact(named: open) == nil { _ = try account.contact(named: open) }
        }
        let session = try ViewSession(locations: locations, logPath: "\(locations.home)/view.log")
        let status = session.run(TUIOptions(openAtStart: open))
        // About 30 seconds more in the background: finish sending what is in flight and
        // alert on what arrives.
        session.release()
        Linger.spawn(locations)
        exit(status)
    }

    static func requireTerminal() throws(EngineError) {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw .io("the full-screen view needs a terminal (see rchat --help for the commands)")
        }
    }
}

/// One account opened for the view: the engine on a thread of its own (its own store
/// connection), the model over a second connection for the UI thread, and the engine lock.
final class ViewSession {
    let model: EngineChatModel
    private let runner: EngineThread
    private var lock: EngineLock?
    private let log: Logger
    /// The account's home: where the view writes a draft for the editor.
    private let home: String

    init(locations: Locations, logPath: String) throws(EngineError) {
        home = locations.home
        let engineAccount = try AccountService(locations: locations)
        // A view that quit moments ago may still be lingering: it hands over at once.
        guard let lock = try Linger.takeOver(locations) else {
            throw .io("another rchat (the view or rchat sync) is already running on \(locations.home); quit it first")
        }
        try TUICommand.requireTerminal()
        self.lock = lock
        let log = LogFile.logger(path: logPath)
        self.log = log
        let engine = try Engine(account: engineAccount, log: log)
        let model = try EngineChatModel(account: try AccountService(locations: locations), engine: engine)
        model.desktop = AlertSink.desktop(onClick: NotifyCommand.onClick(locations))
        self.model = model
        let sink = model.eventSink
        let ended: @Sendable (EngineError?) -> Void = { failure in
            guard let failure else { return }
            log.error("the engine stopped: \(failure)")
            sink(.connectionChanged(.stopped(reason: EngineChatModel.sentence(failure.description))))   // the view says why
        }
        runner = EngineThread(engine: engine, whenFinished: ended)
    }

    /// Runs the view until the user quits, then stops the engine (its sessions saved).
    /// Returns the exit status.
    func run(_ options: TUIOptions) -> Int32 {
        var options = options
        if options.draftDirectory == nil { options.draftDirectory = home }
        ExternalEditor.removeLeftovers(in: home)
        runner.start()
        var status = runTUI(model: model, options: options)
        if !runner.stop(timeout: 10) {
            warn("the engine did not stop within 10 s")
            status = 1
        }
        if let failure = runner.failure {
            warn("\(failure)")
            status = 1
        }
        withExtendedLifetime(lock) {}
        return status
    }

    /// Lets go of the engine lock (for the lingering process to take it).
    func release() { lock = nil }
}

/// Where the view's log goes instead of the screen: one timestamped line per event, the
/// file started afresh each run (mode 0600; whatever was at its name, a planted symlink
/// included, is removed, never written through).
final class LogFile: @unchecked Sendable {
    /// A logger writing to a new file at `path`.
    static func logger(path: String, threshold: LogLevel = .note) -> Logger {
        let file = LogFile(path: path)
        return Logger(threshold: threshold) { file.write($0) }
    }

    private let fd: Int32
    private let lock = NSLock()

    init(path: String) {
        fd = PrivateFiles.createAfresh(path, O_WRONLY | O_APPEND)
    }

    deinit { if fd >= 0 { close(fd) } }

    func write(_ line: String) {
        guard fd >= 0 else { return }
        let stamp = ISO8601DateFormatter.string(from: Date(), timeZone: .current, formatOptions: [.withInternetDateTime])
        let bytes = Array("\(stamp) \(line)\n".utf8)
        lock.withLock { _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
    }
}
