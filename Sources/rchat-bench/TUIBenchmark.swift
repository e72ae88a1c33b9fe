import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine
import RChatSQL
import RChatStore
import RChatTUI

/// `rchat-bench tui`: the full-screen view over a real store, through `EngineChatModel` and
/// `ChatView` (the view without a terminal: it renders into a grid of cells, exactly what
/// the curses backend then writes).
///
/// (a) First frame: from creating the view, open on a conversation of `--messages` (100,000)
///     messages, to its first `Screen` — the page queries, the layout and the Read report
///     included. Cold (the first in a freshly opened store) and warm (median of 20).
/// (b) Memory: a child process opens the view (and an engine, as `rchat` does) over a
///     store holding `--big` (1,000,000) messages in that conversation, draws the first
///     frame, pages back 200 screens and forward again, and reports its VmRSS; the same over
///     a store with the account and contact but no messages. Target: within 10 MiB.
/// (c) Search: see `searchFigures` (SearchBenchmark.swift). Target: 50 ms.
struct TUIBenchmark {
    static let messages = Declared.integer("--messages", in: 1...10_000_000, default: 100_000, help: "messages in the conversation opened")
    static let big = Declared.integer("--big", in: 1...10_000_000, default: 1_000_000, help: "messages for the memory figure")
    static let command = BenchmarkCommand(name: "tui", options: [messages.option, big.option])

    let messages: Int
    let big: Int
    var rows = 30
    var columns = 100

    init(arguments: [String]) {
        let options = Self.command.parse(arguments)
        messages = options[Self.messages]
        big = options[Self.big]
    }

    static let offlineRelay = "127.0.0.1:9/" + String(repeating: "A", count: 43)

    func run() {
        let directory = NSTemporaryDirectory() + "rchat-bench-tui-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("rchat-bench tui: the view (EngineChatModel + ChatView) over real stores, \(columns)×\(rows) cells")

        let samCode = makeSam(directory)
        let empty = makeAccount(directory, "empty", samCode: samCode, messages: 0)
        let medium = makeAccount(directory, "medium", samCode: samCode, messages: messages)
        let large = makeAccount(directory, "large", samCode: samCode, messages: big)

        // (a) first frame
        let (cold, warm) = firstFrame(medium)
        let (coldBig, warmBig) = firstFrame(large)
        print("")
        print("| measure | figure | target |")
        print("|---|---:|---|")
        print("| first frame, \(grouped(messages)) messages, cold (store just opened) | \(ms(cold)) | < 30 ms \(cold < 30 ? "✓" : "✗") |")
        print("| first frame, \(grouped(messages)) messages, warm (median of 20) | \(ms(warm)) | < 30 ms \(warm < 30 ? "✓" : "✗") |")
        print("| first frame, \(grouped(big)) messages, cold / warm | \(ms(coldBig)) / \(ms(warmBig)) | — |")

        // (c) search
        for row in searchFigures(directory) { print(row) }

        // (b) memory, each in a fresh process, median of 3
        let emptyRSS = median((0..<3).map { _ in childRSS(empty) })
        let largeRSS = median((0..<3).map { _ in childRSS(large) })
        let difference = Double(largeRSS - emptyRSS) / 1_048_576
        print("| view RSS, empty store | \(mib(emptyRSS)) | — |")
        print("| view RSS, \(grouped(big)) messages (after paging 200 screens back and forth) | \(mib(largeRSS)) | — |")
        print("| difference | \(String(format: "%.1f MiB", difference)) | within 10 MiB \(difference <= 10 ? "✓" : "✗") |")
    }

    // MARK: stores

    private func makeSam(_ directory: String) -> ContactCode {
        let locations = Locations(home: directory + "/sam", deviceDirectory: directory + "/sam-device")
        do {
            try AccountService.create(at: locations, name: "Sam", relay: try RelayAddress(parsing: Self.offlineRelay))
            return try AccountService(locations: locations).contactCode()
        } catch {
            fail("cannot create the contact: \(error)")
        }
    }

    /// An account with Sam added and `messages` in that conversation, alternating in and
    /// out, all Read: inserted in one transaction through the store's connection, one
    /// prepared INSERT reused for every row.
    private func makeAccount(_ directory: String, _ name: String, samCode: ContactCode, messages: Int) -> Locations {
        let locations = Locations(home: "\(directory)/\(name)", deviceDirectory: "\(directory)/\(name)-device")
        let started = Date()
        do {
            try AccountService.create(at: locations, name: "You", relay: try RelayAddress(parsing: Self.offlineRelay))
            let account = try AccountService(locations: locations)
            _ = try account.addContact(samCode, name: nil)
            // Asked and answered, so the first frame is the conversation, not the question.
            try account.setSetting(.desktopAlerts, "off")
            let contact = try account.contact(named: "Sam")
            let start: Int64 = 1_700_000_000
            try account.store.transaction { tx in
                var id = [UInt8](repeating: 0, count: 16)
                for n in 0..<messages {
                    withUnsafeBytes(of: UInt64(n).bigEndian) { for (i, b) in $0.enumerated() { id[8 + i] = b } }
                    id[0] = 0x42
                    let outgoing = n % 2 == 1
                    let at = start + Int64(n) * 30
                    try tx.database.execute("""
                        INSERT INTO messages (conversation_id, author_id, id, direction, content, created_at, received_at, read_at, position)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, [.integer(contact.id.rawValue), outgoing ? .null : .integer(contact.id.rawValue), .blob(id),
                              .text(outgoing ? "out" : "in"),
                              .blob(MessageContent.text(Self.text(n)).encoded()),
                              .integer(at), outgoing ? .null : .integer(at), outgoing ? .null : .integer(at), .integer(Int64(n + 1))])
                    if outgoing {
                        try tx.database.execute("INSERT INTO message_status (message_rowid, member_id, status) VALUES (?, ?, ?)",
                                                [.integer(tx.database.lastInsertRowID), .integer(contact.id.rawValue),
                                                 .text(MessageStatus.read.rawValue)])
                    }
                }
            }
        } catch {
            fail("cannot populate \(name): \(error)")
        }
        if messages > 0 {
            let seconds = Date().timeIntervalSince(started)
            print("populated \(grouped(messages)) messages in \(String(format: "%.1f", seconds)) s (\(grouped(Int(Double(messages) / seconds))) rows/s, one transaction)")
        }
        return locations
    }

    /// Short and long texts, so some messages wrap over several lines.
    static func text(_ n: Int) -> String {
        let words = ["the", "relay", "holds", "what", "waits", "and", "nothing", "is", "shown", "twice", "every", "status", "true"]
        let count = 3 + (n * 7919) % 40
        return (0..<count).map { words[($0 + n) % words.count] }.joined(separator: " ") + " #\(n)"
    }

    // MARK: (a)

    /// Milliseconds to the first frame: the first in a freshly opened store, and the median
    /// of 20 more views over the same model.
    private func firstFrame(_ locations: Locations) -> (cold: Double, warm: Double) {
        do {
            let model = try EngineChatModel(account: try AccountService(locations: locations), wake: {})
            let cold = time { render(model) }
            let warm = median((0..<20).map { _ in time { render(model) } })
            return (cold, warm)
        } catch {
            fail("cannot open \(locations.home): \(error)")
        }
    }

    @discardableResult
    private func render(_ model: ChatModel) -> Screen {
        let view = ChatView(model: model, options: TUIOptions(timeZone: TimeZone(identifier: "UTC")!, openAtStart: "Sam"),
                            glyphs: .unicode, rows: rows, columns: columns)
        let screen = view.frame()
        guard view.state.window?.total ?? 0 > 0 else { fail("the view opened an empty conversation") }
        return screen
    }

    // MARK: (b)

    /// Runs `rchat-bench tui-child HOME DEVICE` and reads the VmRSS it reports.
    private func childRSS(_ locations: Locations) -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = ["tui-child", locations.home, locations.deviceDirectory]
        let out = Pipe()
        process.standardOutput = out
        do { try process.run() } catch { fail("cannot run the child: \(error)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rss ") }), let bytes = Int(line.dropFirst(4)) else {
            fail("the child said: \(text)")
        }
        return bytes
    }

    /// The child: the view and an engine over the store (the relay is unreachable, so the
    /// engine only retries), first frame, paging back and forth, then its own VmRSS.
    static func child(_ arguments: [String]) {
        guard arguments.count == 2 else { exit(2) }
        let locations = Locations(home: arguments[0], deviceDirectory: arguments[1])
        do {
            let engine = try Engine(account: try AccountService(locations: locations)) { _ in }
            let model = try EngineChatModel(account: try AccountService(locations: locations), engine: engine)
            let runner = EngineThread(engine: engine)
            runner.start()
            let view = ChatView(model: model, options: TUIOptions(openAtStart: "Sam"), rows: 30, columns: 100)
            _ = view.frame()
            for _ in 0..<200 { view.handle(.pageUp); _ = view.frame() }
            for _ in 0..<200 { view.handle(.pageDown); _ = view.frame() }
            view.handle(model.drainEvents())
            _ = view.frame()
            print("rss \(residentBytes(getpid()))")
            runner.stop()
        } catch {
            print("error \(error)")
            exit(1)
        }
    }

    // MARK: figures

    func time(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    func median<T: Comparable>(_ values: [T]) -> T { values.sorted()[values.count / 2] }
    func ms(_ v: Double) -> String { String(format: "%.1f ms", v) }
    func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
    func grouped(_ n: Int) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.groupingSeparator = ","
        return formatter.string(from: NSNumber(value: n)) ?? String(n)
    }

    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("rchat-bench tui: \(message)\n".utf8))
        exit(1)
    }
}
