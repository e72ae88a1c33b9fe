import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine

enum CheckCommand {
    static let all: [Command] = [check]

    static let check = Command(
        name: "check", usage: "rchat check [--print] [--install-timer | --remove-timer]",
        summary: "The background check: collect held messages, store them, alert.",
        details: """
        Connects to the account's relays, proves its identity, collects the messages and
        requests held there, stores them with the saved state, alerts, and disconnects. It
        opens no conversations and sends nothing: Delivered receipts go at the next sync or
        view. If rChat is already running on this home, the running one does the work.
        Alerts go to the desktop (over the session bus) when one is reachable and desktop alerts
        were allowed (`rchat settings desktop-alerts on`), else to the terminal;
        --print writes each as TITLE<TAB>TEXT to standard output instead.
        --install-timer writes a systemd user timer that runs the check about every 15
        minutes (and prints the equivalent crontab line); --remove-timer removes it.
        """,
        options: [.flag("--print", help: "alerts to standard output, TITLE<TAB>TEXT"),
                  .flag("--install-timer", help: "run the check about every 15 minutes"),
                  .flag("--remove-timer", help: "stop running it")]
    ) { args, locations in
        try args.expectPositionals(max: 0)
        if args.has("--install-timer") && args.has("--remove-timer") {
            throw Arguments.UsageError(description: "--install-timer and --remove-timer go alone")
        }
        if args.has("--install-timer") { return try CheckTimer(locations: locations).install() }
        if args.has("--remove-timer") { return try CheckTimer(locations: locations).remove() }
        let account = try AccountService(locations: locations)
        guard let lock = try EngineLock(home: locations.home) else {
            warn("rChat is running on \(locations.home); it collects and alerts itself")
            return
        }
        let engine = try Engine(account: account, log: engineLog)
        let arrived = try engine.runCheck()
        let center = AlertCenter(account: account)
        let sink: AlertSink = args.has("--print") ? .print
            : try center.desktopAllowed ? .detect(onClick: NotifyCommand.onClick(locations)) : .terminal
        for alert in try center.alerts(for: arrived) { sink.post(alert) }
        withExtendedLifetime(lock) {}
    }
}

/// The systemd user timer (and the crontab line) that runs `rchat check` about every
/// 15 minutes.
struct CheckTimer {
    let locations: Locations
    let environment = ProcessInfo.processInfo.environment

    var unitDirectory: String {
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(environment["HOME"] ?? NSHomeDirectory())/.config"
        return "\(config)/systemd/user"
    }

    var command: String {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
        let home = URL(fileURLWithPath: locations.home).standardizedFileURL.path
        let device = URL(fileURLWithPath: locations.deviceDirectory).standardizedFileURL.path
        return [binary, "check", "--home", home, "--device-dir", device].map(quote).joined(separator: " ")
    }

    func quote(_ s: String) -> String {
        s.allSatisfy { $0.isLetter || $0.isNumber || "/._-+:@".contains($0) } ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    func install() throws {
        try FileManager.default.createDirectory(atPath: unitDirectory, withIntermediateDirectories: true)
        let service = """
        [Unit]
        Description=rChat background check: collect held messages and alert

        [Service]
        Type=oneshot
        ExecStart=\(command)

        """
        let timer = """
        [Unit]
        Description=Run the rChat background check about every 15 minutes

        [Timer]
        OnBootSec=2min
        OnUnitActiveSec=15min
        RandomizedDelaySec=60
        Persistent=true

        [Install]
        WantedBy=timers.target

        """
        try service.write(toFile: "\(unitDirectory)/rchat-check.service", atomically: true, encoding: .utf8)
        try timer.write(toFile: "\(unitDirectory)/rchat-check.timer", atomically: true, encoding: .utf8)
        say("wrote \(unitDirectory)/rchat-check.service and rchat-check.timer")
        if systemctl(["daemon-reload"]) && systemctl(["enable", "--now", "rchat-check.timer"]) {
            say("enabled: systemctl --user status rchat-check.timer")
        } else {
            say("to enable it: systemctl --user daemon-reload && systemctl --user enable --now rchat-check.timer")
        }
        say("or, with cron instead (crontab -e):")
        say("*/15 * * * * \(command)")
    }

    func remove() throws {
        _ = systemctl(["disable", "--now", "rchat-check.timer"])
        var removed = 0
        for name in ["rchat-check.timer", "rchat-check.service"] {
            let path = "\(unitDirectory)/\(name)"
            if FileManager.default.fileExists(atPath: path) {
                try FileManager.default.removeItem(atPath: path)
                removed += 1
            }
        }
        _ = systemctl(["daemon-reload"])
        say(removed > 0 ? "removed the rchat-check timer" : "no rchat-check timer was installed")
        say("if you used cron instead, remove the `rchat check` line with crontab -e")
    }

    /// `systemctl --user …`, at most five seconds; false when it is missing or fails.
    func systemctl(_ arguments: [String]) -> Bool {
        guard let path = ["/usr/bin/systemctl", "/bin/systemctl"].first(where: FileManager.default.isExecutableFile) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--user"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        Polling.until(within: 5) { !process.isRunning }
        if process.isRunning { process.terminate(); return false }
        return process.terminationStatus == 0
    }
}
