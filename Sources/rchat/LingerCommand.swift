import Foundation
import Synchronization
import RChatCore
import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// After the view quits, rChat goes on in the background for about 30 seconds to finish
/// sending what is in flight and to alert on what arrives; a new start during
/// that time takes over at once.
enum Linger {
    static let seconds = 30.0

    static func pidPath(_ home: String) -> String { "\(home)/linger.pid" }

    /// Starts `rchat linger` in a session of its own, detached from the terminal; it is told
    /// which terminal the view ran in, to alert there when desktop alerts are off or there is
    /// no desktop.
    static func spawn(_ locations: Locations) {
        var arguments = [Detached.ownPath, "linger", "--home", locations.home, "--device-dir", locations.deviceDirectory]
        if let tty = ttyname(STDIN_FILENO) { arguments += ["--tty", String(cString: tty)] }
        Detached.start(arguments)
    }

    /// A lingering rChat on this home is asked to stop; waits (up to 5 s) until the engine
    /// lock is free again. Returns the lock, or nil if something else holds it.
    static func takeOver(_ locations: Locations) throws(EngineError) -> EngineLock? {
        if let lock = try EngineLock(home: locations.home) { return lock }
        guard let text = try? String(contentsOfFile: pidPath(locations.home), encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
              isLinger(pid) else { return nil }
        kill(pid, SIGTERM)
        return try Polling.value(within: 5) { () throws(EngineError) in try EngineLock(home: locations.home) }
    }

    /// Only a process that is really `rchat linger` is ever signalled (a stale pid file may
    /// name something else by now).
    static func isLinger(_ pid: Int32) -> Bool {
        guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        return cmdline.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "linger" }
    }

    static let command = Command(
        name: "linger", usage: "rchat linger [--tty PATH]",
        summary: "(started by the view when it quits) finish sending and alert for about 30 s.",
        details: """
        Alerts as `rchat check` does: on the desktop when desktop alerts are on and there is
        a desktop (a session bus or a display), else on the terminal PATH
        the view ran in; when that terminal is gone, they are kept and shown at the next
        start of the view ("While you were away").
        """,
        options: [.text("--tty", "PATH", help: "the terminal the view ran in")]
    ) { args, locations in
        try args.expectPositionals(max: 0)
        let account = try AccountService(locations: locations)
        // The view that started us may still be releasing the lock.
        guard let lock = try Polling.value(within: 3, { () throws(EngineError) in try EngineLock(home: locations.home) })
        else { return }
        let engine = try Engine(account: account, log: .discarding)
        let center = AlertCenter(account: account)
        // The desktop when desktop alerts are on and there is one (a session bus or a
        // display); else the terminal, never standard error (nowhere here).
        let desktop = try center.desktopAllowed ? AlertSink.desktop(onClick: NotifyCommand.onClick(locations)) : nil
        let sink = desktop ?? args.value("--tty").map { .device(path: $0) }
        let alerts = AlertFeed(center: center) { alert in
            // Shown nowhere (the terminal is gone): kept for the next start.
            if sink?.post(alert) != true { try? center.owe(alert) }
        }
        alerts.attach(to: engine)
        Signals.onTerminate { engine.stop() }
        // Written only once a SIGTERM would end us cleanly: the next start relies on it.
        let pidFile = pidPath(locations.home)
        try? "\(getpid())\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        try engine.run(seconds: seconds)
        alerts.finish()
        // Alerts that could not be worked out (a setting that does not read): that error.
        if let error = alerts.error { throw error }
        withExtendedLifetime(lock) {}
    }
}
