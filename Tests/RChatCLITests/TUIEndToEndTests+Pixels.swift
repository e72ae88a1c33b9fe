import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A received photo's sixel preview in a real xterm (`-ti vt340`) under Xvfb, at two font
/// sizes so the cell's pixels differ, read back from screenshots (`import`): the header on
/// the top row, the status bar and the composer on the last two, the picture inside its
/// box. Runs where Xvfb, xterm, ImageMagick and DejaVu Sans Mono are installed (`make
/// deps`); Tests/Scripts/sixel-xterm.sh takes the same screenshots for a person to look at.
extension TUIEndToEndTests {
    static func installed(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    func testASixelPreviewStaysInItsBoxInXtermAtAnyCellSize() throws {
        for tool in ["Xvfb", "xterm", "import", "convert", "fc-list"] {
            try XCTSkipUnless(Self.installed(tool), "\(tool) is not installed (make deps installs it)")
        }
        let fonts = try world.box.run("/usr/bin/env", ["fc-list", "DejaVu Sans Mono"]).stdout
        try XCTSkipIf(fonts.isEmpty, "DejaVu Sans Mono is not installed (fonts-dejavu-core)")

        // Red above blue: a red or blue pixel outside the box is the picture overflowing.
        try photoOnItsWay()

        let display = try XvfbDisplay(box: world.box)
        defer { display.stop() }
        for size in [14, 8] {
            let view = Process()
            view.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            view.arguments = ["xterm", "-ti", "vt340", "-fa", "DejaVu Sans Mono", "-fs", String(size), "-geometry", "100x30+0+0",
                              "-e", Binaries.path("rchat"), "--home", world.box.path("alice-home"),
                              "--device-dir", world.box.path("alice-device"), "--open", "Sam"]
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display.name
            environment["LANG"] = "C.UTF-8"
            environment["RCHAT_GRAPHICS"] = "sixel"
            for key in ["LC_ALL", "LC_CTYPE", "NO_COLOR", "COLORTERM"] { environment[key] = nil }
            view.environment = environment
            view.standardInput = FileHandle.nullDevice
            view.standardOutput = FileHandle.nullDevice
            view.standardError = FileHandle.nullDevice
            try view.run()
            // The view ended with its terminal leaves a linger (ended by its PID), which
            // the next view would have to take over from.
            defer { display.end(view); XCTAssertNoThrow(try stopLinger("alice")) }
            var last = XtermShot.Verdict.notYet("no screenshot")
            let shot = world.box.path("xterm-fs\(size).png")
            let deadline = Date(timeIntervalSinceNow: 30)
            repeat {
                if let pixels = try display.screenshot(to: shot) { last = XtermShot(pixels).verdict(rows: 30, columns: 100) }
                if case .good = last { break }
                waitUntilDeadline(min(deadline, Date(timeIntervalSinceNow: 0.2)))
            } while Date() < deadline
            if case .good = last { continue }
            let kept = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-xterm-fs\(size).png").path
            try? FileManager.default.removeItem(atPath: kept)
            try? FileManager.default.copyItem(atPath: shot, toPath: kept)
            XCTFail("xterm -fs \(size): \(last) (screenshot: \(kept))\n\(logs())")
        }
    }

    /// Alice and Sam paired, a 320×480 photo (red above blue) from Sam on its way to Alice.
    func photoOnItsWay() throws {
        try world.makePair("alice", "sam")
        let picture = world.box.path("beach.png")
        try world.expectSuccess(world.box.run("/usr/bin/env", ["convert", "-size", "320x240", "xc:red", "(", "-size", "320x240", "xc:blue", ")",
                                                               "-append", picture]))
        try world.expectSuccess(world.box.rchat("sam", ["send", "Alice", "--file", picture]))
        try world.startSync("sam")
        try world.expectSuccess(world.box.rchat("alice", ["settings", "desktop-alerts", "off"]))
    }

    /// The view on a terminal of this test's own (a pty whose window size has no pixels, as
    /// many terminals leave it): it asks `CSI 16 t`, `CSI 14 t`, `CSI c`; keys typed before
    /// the answer reach the composer, in order; the photo's sixel is sized by the answer
    /// (cells of 7×14: 72×108 pixels for 320×480 in a box of 40×8); Ctrl-L draws it again
    /// on a cleared screen; a resize asks again and draws it for the new cell.
    func testTheViewAsksATerminalItsCellAndKeepsTheKeysTypedMeanwhile() throws {
        try XCTSkipUnless(Self.installed("convert"), "convert is not installed (make deps installs imagemagick)")
        try photoOnItsWay()
        let terminal = try PseudoTerminal(rows: 30, columns: 100, [Binaries.path("rchat"), "--home", world.box.path("alice-home"),
                                                                     "--device-dir", world.box.path("alice-device"), "--open", "Sam"],
                                          environment: ["TERM": "xterm-256color", "LANG": "C.UTF-8", "RCHAT_GRAPHICS": "sixel"])
        // The view ended leaves a linger, ended by its PID.
        defer { terminal.end(); XCTAssertNoThrow(try stopLinger("alice")) }
        let asked = try terminal.read(until: "the questions about pixels") { $0.contains(Array("\u{1B}[16t\u{1B}[14t\u{1B}[c".utf8)) }
        XCTAssertFalse(asked.contains(Array("\u{1B}P".utf8)), "no sixel before the answer")
        terminal.write("hel")   // typed while the terminal is being asked
        terminal.write("lo\u{1B}[6;14;7t" + "\u{1B}[4;420;700t" + "\u{1B}[?62;4c")
        let shown = try terminal.read(until: "the sixel in cells of 7x14, and the keys in the composer") { output in
            output.contains(Array("\"1;1;72;108".utf8)) && PseudoTerminal.text(output).contains("hello")
        }
        // Typed after raw mode began (nothing echoes them): "hello" on the screen is the view drawing them, in order.
        let answered = PseudoTerminal.text(asked).count
        XCTAssertTrue(PseudoTerminal.text(shown).dropFirst(answered).contains("hello"), PseudoTerminal.text(shown))

        // Ctrl-L: the screen cleared and the picture drawn again.
        var mark = terminal.output.count
        terminal.write("\u{0C}")
        try terminal.read(until: "a clear screen, then the sixel again") { output in
            guard let clear = output[mark...].firstRange(of: Array("\u{1B}[2J".utf8)) else { return false }
            return output[clear.upperBound...].firstRange(of: Array("\"1;1;72;108".utf8)) != nil
        }
        // Resized (a font change comes as one): asked again, the picture drawn for the new cell.
        mark = terminal.output.count
        terminal.resize(rows: 32, columns: 110)
        try terminal.read(until: "the questions asked again") { $0[mark...].firstRange(of: Array("\u{1B}[16t\u{1B}[14t\u{1B}[c".utf8)) != nil }
        terminal.write("\u{1B}[6;24;12t\u{1B}[?62;4c")
        try terminal.read(until: "the sixel in cells of 12x24") { $0[mark...].firstRange(of: Array("\"1;1;128;192".utf8)) != nil }
    }
}

/// An X server of this test's own on a display nobody uses, stopped by its PID.
final class XvfbDisplay {
    let name: String
    private let server: Process
    private let box: Sandbox

    /// Xvfb chooses the display itself (`-displayfd 1`: it writes the number to standard
    /// output once it listens), so nothing here guesses at which displays are taken.
    init(box: Sandbox) throws {
        self.box = box
        let p = Process()
        let out = Pipe()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["Xvfb", "-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let fd = out.fileHandleForReading.fileDescriptor
        var text = ""
        let deadline = Date(timeIntervalSinceNow: 10)
        while p.isRunning, !text.contains("\n"), Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { break }
            text.append(Character(UnicodeScalar(byte)))
        }
        guard p.isRunning, let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            Self.end(p)
            throw TimedOut(what: "Xvfb to say its display", seconds: 10, context: text)
        }
        name = ":\(number)"
        server = p
    }

    /// The whole screen as RGB bytes (1280×1024), also written to `path` as PNG; nil when
    /// `import` could not take it.
    func screenshot(to path: String) throws -> XtermShot.Pixels? {
        let env = ["DISPLAY": name]
        guard try box.run("/usr/bin/env", ["import", "-window", "root", path], env: env).status == 0 else { return nil }
        let raw = path + ".rgb"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        guard try box.run("/usr/bin/env", ["convert", path, "-depth", "8", "rgb:" + raw]).status == 0,
              let data = FileManager.default.contents(atPath: raw), data.count == 1280 * 1024 * 3 else { return nil }
        return XtermShot.Pixels(width: 1280, height: 1024, rgb: [UInt8](data))
    }

    /// Ends a process this test started (the xterm), by its PID, within a deadline.
    func end(_ p: Process) { Self.end(p) }

    func stop() { Self.end(server) }

    private static func end(_ p: Process) {
        if p.isRunning { kill(p.processIdentifier, SIGTERM) }
        let deadline = Date(timeIntervalSinceNow: 10)
        while p.isRunning && Date() < deadline { waitUntilDeadline(Date(timeIntervalSinceNow: 0.02)) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
    }
}

/// What a screenshot of xterm (white background, at the screen's top-left corner, a
/// border of 2 pixels inside) shows of the view's layout.
struct XtermShot {
    struct Pixels {
        var width: Int
        var height: Int
        var rgb: [UInt8]

        func at(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
            let i = (y * width + x) * 3
            return (rgb[i], rgb[i + 1], rgb[i + 2])
        }
    }

    enum Verdict: Equatable, CustomStringConvertible {
        case good
        case notYet(String)
        case broken(String)

        var description: String {
            switch self {
            case .good: "good"
            case .notYet(let why): "not drawn yet: \(why)"
            case .broken(let why): why
            }
        }
    }

    let pixels: Pixels

    init(_ pixels: Pixels) { self.pixels = pixels }

    static func isWhite(_ p: (r: UInt8, g: UInt8, b: UInt8)) -> Bool { p.r > 230 && p.g > 230 && p.b > 230 }
    static func isRed(_ p: (r: UInt8, g: UInt8, b: UInt8)) -> Bool { p.r > 200 && p.g < 60 && p.b < 60 }
    static func isBlue(_ p: (r: UInt8, g: UInt8, b: UInt8)) -> Bool { p.b > 200 && p.r < 60 && p.g < 60 }

    /// The view of `rows`×`columns` in xterm: the window found by its white background, the
    /// cell from its size; the header and the status bar (reverse video) where they belong,
    /// the composer's row white, and every red or blue pixel of the picture inside its box
    /// (8 rows under the photo's line, 40 columns from the text's column).
    func verdict(rows: Int, columns: Int) -> Verdict {
        var right = 0, bottom = 0
        for y in stride(from: 0, to: pixels.height, by: 1) where Self.isWhite(pixels.at(min(pixels.width - 1, 200), y)) { bottom = y }
        for x in 0..<pixels.width where Self.isWhite(pixels.at(x, min(pixels.height - 1, max(0, bottom - 3)))) { right = x }
        guard right > 100, bottom > 100 else { return .notYet("no xterm window") }
        // The text area starts 2 pixels in (xterm's internal border), at the first white column.
        var left = 0
        while left < right && !Self.isWhite(pixels.at(left, bottom - 1)) { left += 1 }
        let top = left
        let cellWidth = (right - left + 1 - 4) / columns, cellHeight = (bottom - top + 1 - 4) / rows
        guard cellWidth > 2, cellHeight > 5 else { return .notYet("a window of \(right)x\(bottom)") }
        func rowBand(_ row: Int) -> Range<Int> { (top + 2 + row * cellHeight)..<(top + 2 + (row + 1) * cellHeight) }
        func dark(_ row: Int) -> Double {
            var n = 0, all = 0
            for y in rowBand(row) { for x in (left + 2)..<(left + 2 + columns * cellWidth) { all += 1; if !Self.isWhite(pixels.at(x, y)) { n += 1 } } }
            return Double(n) / Double(max(1, all))
        }
        var red = 0, blue = 0
        var minX = Int.max, maxX = -1, minY = Int.max, maxY = -1
        for y in (top + 2)..<(top + 2 + rows * cellHeight) {
            for x in (left + 2)..<(left + 2 + columns * cellWidth) {
                let p = pixels.at(x, y)
                let r = Self.isRed(p), b = Self.isBlue(p)
                guard r || b else { continue }
                if r { red += 1 } else { blue += 1 }
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
            }
        }
        guard red > 0, blue > 0 else { return .notYet("no picture yet (cells of \(cellWidth)x\(cellHeight))") }
        let header = dark(0), status = dark(rows - 2), composer = dark(rows - 1)
        var wrong: [String] = []
        if header < 0.5 { wrong.append("the header is not on the top row (\(Int(header * 100))% dark)") }
        if status < 0.5 { wrong.append("the status bar is not on row \(rows - 1) (\(Int(status * 100))% dark)") }
        if composer > 0.3 { wrong.append("the composer's row is not the last (\(Int(composer * 100))% dark)") }
        if maxY >= rowBand(rows - 2).lowerBound { wrong.append("the picture reaches the status bar (y \(maxY))") }
        if minY < rowBand(1).lowerBound { wrong.append("the picture reaches the header (y \(minY))") }
        if maxY - minY + 1 > 8 * cellHeight { wrong.append("the picture is \(maxY - minY + 1) px high, more than 8 rows of \(cellHeight)") }
        if maxX - minX + 1 > 40 * cellWidth { wrong.append("the picture is \(maxX - minX + 1) px wide, more than 40 columns of \(cellWidth)") }
        // The list takes 25 columns and its line one; the text starts 11 further (time, name).
        let textLeft = left + 2 + 37 * cellWidth
        if minX < textLeft - 1 { wrong.append("the picture starts left of the text's column (x \(minX) < \(textLeft))") }
        return wrong.isEmpty ? .good : .broken(wrong.joined(separator: "; ") + " (cells of \(cellWidth)x\(cellHeight))")
    }
}

/// A terminal of the test's own: a pty, its program started in a session of its own with
/// the pty as its controlling terminal, everything it writes kept; ended by its PID.
final class PseudoTerminal {
    private let master: Int32
    private let pid: pid_t
    private var ended = false
    private(set) var output: [UInt8] = []

    init(rows: Int, columns: Int, _ command: [String], environment: [String: String]) throws {
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        // Linux's TIOCSPTLCK (unlock the pty) and TIOCGPTN (its number), which Glibc does not export.
        let unlockRequest: UInt = 0x4004_5431, numberRequest: UInt = 0x8004_5430
        var number: UInt32 = 0, unlock: Int32 = 0
        guard master >= 0, ioctl(master, unlockRequest, &unlock) == 0, ioctl(master, numberRequest, &number) == 0 else {
            throw TimedOut(what: "a pseudo-terminal", seconds: 0, context: String(cString: strerror(errno)))
        }
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, master)
        // setsid first, then the shell opens the pty: it becomes the controlling terminal;
        // the size in cells only (stty leaves the pixel fields 0).
        let script = "exec <>/dev/pts/\(number) >&0 2>&0; stty rows \(rows) cols \(columns) && exec \"$0\" \"$@\""
        let words = ["/usr/bin/setsid", "/bin/sh", "-c", script] + command
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var env = ProcessInfo.processInfo.environment
        for key in ["LC_ALL", "LC_CTYPE", "NO_COLOR", "COLORTERM", "RCHAT_PASSPHRASE"] { env[key] = nil }
        for (k, v) in environment { env[k] = v }
        var envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in envp { free(p) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, words[0], &actions, nil, &argv, &envp)
        guard spawned == 0 else {
            close(master)
            throw TimedOut(what: "the program on the pty could not start: \(spawned)", seconds: 0, context: "")
        }
        pid = child
    }

    deinit { end(); close(master) }

    /// A new window size in cells (no pixels): the kernel signals the program (SIGWINCH).
    func resize(rows: Int, columns: Int) {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(master, &bytes, bytes.count)
    }

    /// Reads what the program writes until `condition` holds of all of it (or 20 s pass).
    @discardableResult
    func read(until what: String, _ condition: ([UInt8]) -> Bool) throws -> [UInt8] {
        let deadline = Date(timeIntervalSinceNow: 20)
        while !condition(output) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TimedOut(what: what, seconds: 20, context: Self.text(output).suffix(2000).description) }
            var fd = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&fd, 1, Int32(min(left, 0.5) * 1000) + 1) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = Glibc.read(master, &buffer, buffer.count)
            if n > 0 { output += buffer[0..<n] } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                throw TimedOut(what: what + " (the terminal closed)", seconds: 0, context: Self.text(output).suffix(2000).description)
            }
        }
        return output
    }

    /// The output without escape sequences (CSI, character sets, and the strings of DCS,
    /// OSC, APC).
    static func text(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            guard bytes[i] == 0x1B, i + 1 < bytes.count else { out.append(bytes[i]); i += 1; continue }
            let kind = bytes[i + 1]
            i += 2
            if kind == UInt8(ascii: "[") {
                while i < bytes.count, !(0x40...0x7E).contains(bytes[i]) { i += 1 }
                i += 1
            } else if [UInt8(ascii: "("), UInt8(ascii: ")")].contains(kind) {
                i += 1   // a character set: one more byte
            } else if [UInt8(ascii: "P"), UInt8(ascii: "]"), UInt8(ascii: "_")].contains(kind) {
                while i < bytes.count, bytes[i] != 0x07, !(bytes[i] == 0x1B && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\\")) { i += 1 }
                i += bytes.indices.contains(i) && bytes[i] == 0x07 ? 1 : 2
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// SIGTERM to the program (a clean stop), SIGKILL after 10 s; reaped.
    func end() {
        guard !ended else { return }
        ended = true
        kill(pid, SIGTERM)
        let deadline = Date(timeIntervalSinceNow: 10)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            // Whatever it writes meanwhile is read, so a full pty cannot block its exit.
            var buffer = [UInt8](repeating: 0, count: 65536)
            while Glibc.read(master, &buffer, buffer.count) > 0 {}
            if Date() > deadline { kill(pid, SIGKILL); _ = waitpid(pid, &status, 0); return }
            waitUntilDeadline(Date(timeIntervalSinceNow: 0.02))
        }
    }
}
