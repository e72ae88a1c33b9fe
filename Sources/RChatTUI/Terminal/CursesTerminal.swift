import Glibc
import RChatCore
@preconcurrency import CNcursesw

/// The ncursesw backend: sets the terminal up, writes only the cells that changed since
/// the last frame, reads keys, and puts the terminal back as it was.
final class CursesTerminal {
    /// UTF-8 locale: Unicode glyphs and wide characters. Otherwise ASCII only, and keys
    /// are read with plain getch (wget_wch can hang on a multibyte key in such a locale).
    let unicode: Bool
    let colors: Bool
    /// How many colours the terminal has (terminfo `colors`), when `colors`.
    private var colorCount = 0
    /// The terminal takes OSC sequences (window title, clipboard): not the Linux console,
    /// a VT or `dumb`, which would print them.
    private let osc: Bool
    private var last: Screen?
    private var lastTitle = ""
    private var cursorShown: Bool?
    private var paste = BracketedPaste()
    /// Whether the view asked for mouse reports (`mouse on`, the default).
    private var mouseReporting = false
    /// Keys whose sequence this terminal's terminfo lists under an extended name (xterm's
    /// kLFT5 and kRIT5 for Ctrl-Left and Ctrl-Right): curses hands over a code it made up
    /// for them at start.
    private var extendedKeys: [Int32: Key] = [:]

    init(environment: [String: String]) {
        setlocale(LC_ALL, "")
        let codeset = String(cString: rchat_codeset()).uppercased()
        unicode = codeset == "UTF-8" || codeset == "UTF8"
        initscr()
        raw()
        noecho()
        nonl()
        keypad(stdscr, true)
        nodelay(stdscr, true)
        intrflush(stdscr, false)
        set_escdelay(25)
        // Home and End as tmux, screen and the Linux console send them, where $TERM's
        // terminfo entry does not list them (a sequence it does list keeps its meaning).
        for (bytes, key) in KeyDecoder.escapeSequences where key_defined("\u{1B}" + bytes) == 0 {
            _ = define_key("\u{1B}" + bytes, key == .home ? KEY_HOME : KEY_END)
        }
        // The rest arrive unrecognised, as Esc and characters, and KeyDecoder folds them
        // (focus reports too, unless the entry lists them as kxIN and kxOUT).
        for (bytes, key) in KeyDecoder.wordSequences + KeyDecoder.focusSequences {
            let code = key_defined("\u{1B}" + bytes)
            if code > 0 { extendedKeys[code] = key }
        }
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        colors = !noColor && has_colors()
        if colors {
            start_color()
            use_default_colors()
            colorCount = Int(rchat_colors())
            for role in ColorRole.allCases {
                if let color = RoleColors.foreground(role, colors: colorCount) { init_pair(Int16(role.rawValue), Int16(color), -1) }
            }
        }
        let term = environment["TERM"] ?? ""
        osc = !(term.isEmpty || term == "dumb" || term.hasPrefix("linux") || term.hasPrefix("vt"))
        if osc { emit("\u{1B}[22;0t") }   // save the title, to give it back on exit
        enterModes()
    }

    /// Bracketed paste and focus reporting, where the terminal takes such sequences.
    private func enterModes() {
        guard osc else { return }
        emit(BracketedPaste.enable)
        emit(KeyDecoder.focusReportingOn)
        if mouseReporting { emit(KeyDecoder.mouseReportingOn) }
    }

    var size: (rows: Int, columns: Int) { (Int(getmaxy(stdscr)), Int(getmaxx(stdscr))) }

    /// Writes the frame: only the changed cells, or everything after a resize or Ctrl-L.
    func draw(_ screen: Screen, full: Bool) {
        if full {
            clearok(stdscr, true)
            erase()
            last = nil
        }
        var pieces = Pieces()
        var colored: [ScreenRun] = []
        for run in ScreenDiff.runs(from: last, to: screen) {
            // ncurses gets the characters of cells in colours of their own (a preview's);
            // their colours are written around it after its frame.
            attrset(Int32(bitPattern: attributes(run.style)))
            write(run, &pieces)
            if run.style.hasOwnColors { colored.append(run) }
            // ncurses never knew those colours, so it cannot tell a cell that changed only
            // in them: a row that held some is repainted whole when anything in it changes.
            if let last, Self.hasOwnColors(last, row: run.row) { pieces.rows.insert(run.row) }
        }
        // A picture that moved or went leaves its cells to be repainted.
        let images = ImageWrites.drawable(screen.images, screenRows: screen.rows)
        pieces.rows.formUnion(ImageWrites.rowsToRepaint(from: lastImages, to: images, screenRows: screen.rows))
        // ncurses sends only the changed columns of a cluster it keeps in several cells
        // (the two halves of a flag): repaint such rows whole.
        for row in pieces.rows { wredrawln(stdscr, Int32(row), 1) }
        attrset(0)
        if let (row, column) = screen.cursor {
            setCursor(visible: true)
            move(Int32(row), Int32(column))
        } else {
            setCursor(visible: false)
        }
        refresh()
        if unicode { rewriteMarks(screen, pieces) }
        rewriteColors(screen, colored, repainted: pieces.rows)
        let pictures = ImageWrites.sequence(from: lastImages, to: images, repainted: pieces.rows, full: full)
        if !pictures.isEmpty { emit(pictures) }
        lastImages = images
        last = screen
        if osc && screen.title != lastTitle {
            // Only the badge, never a name or message text: the title is visible to others.
            emit("\u{1B}]2;\(screen.title)\u{07}")
            lastTitle = screen.title
        }
    }

    /// What a frame's writes left for after ncurses: rows to repaint whole, and cells with
    /// more combining marks than an ncurses cell holds.
    private struct Pieces {
        var rows: Set<Int> = []
        var marks: [(row: Int, column: Int, cell: Cell)] = []
    }

    private func write(_ run: ScreenRun, _ pieces: inout Pieces) {
        var column = run.column
        var ascii = ""
        var asciiStart = column
        func flush() {
            if !ascii.isEmpty { mvaddstr(Int32(run.row), Int32(asciiStart), ascii) }
            ascii = ""
        }
        for cell in run.cells {
            let width = max(1, Int(cell.width))
            if cell.character.isASCII || !unicode {
                if ascii.isEmpty { asciiStart = column }
                ascii.append(cell.character.isASCII ? cell.character : "?")
            } else {
                flush()
                // Placed one by one, so a terminal that measures a character differently
                // cannot shift the rest of the row; in the form every terminal gives the
                // cell's width (`TextWidth.terminalForm`), one ncurses cell per column group
                // the C library counts, each with its own marks (added one by one, ncurses
                // would hang a mark after a wide character on its hidden second column).
                let form = TextWidth.terminalForm(of: cell.character)
                let groups = Self.ncursesCells(form)
                var at = column
                for group in groups {
                    var cc = cchar_t()
                    let chars = group.prefix(Self.cellCharacters).map { wchar_t(bitPattern: $0.value) } + [0]
                    setcchar(&cc, chars, 0, 0, nil)
                    mvadd_wch(Int32(run.row), Int32(at), &cc)
                    at += max(1, TextWidth.cWidth(group[0]))
                }
                if groups.count > 1 { pieces.rows.insert(run.row) }
                if groups.contains(where: { $0.count > Self.cellCharacters }) { pieces.marks.append((run.row, column, cell)) }
            }
            column += width
        }
        flush()
    }

    /// An ncurses cell holds one spacing character and `CCHARW_MAX - 1` (4) marks and
    /// drops the rest, as in Zalgo text.
    private static let cellCharacters = Int(CCHARW_MAX)

    /// The code points of a form in ncurses' cells: each spacing one with the zero-width
    /// ones after it.
    static func ncursesCells(_ form: String) -> [[Unicode.Scalar]] {
        var groups: [[Unicode.Scalar]] = []
        for scalar in form.unicodeScalars {
            if TextWidth.cWidth(scalar) > 0 || groups.isEmpty { groups.append([scalar]) } else { groups[groups.count - 1].append(scalar) }
        }
        return groups
    }

    /// Writes the cells ncurses would cut short straight to the terminal, after its frame:
    /// cursor and attributes saved (DECSC), the cell drawn at its place, then restored
    /// (DECRC), so ncurses' idea of the terminal stays true. Rows ncurses repainted whole
    /// get all of theirs again.
    private func rewriteMarks(_ screen: Screen, _ pieces: Pieces) {
        var cells = pieces.marks
        for row in pieces.rows {
            for column in 0..<screen.columns where !cells.contains(where: { $0.row == row && $0.column == column }) {
                let cell = screen[row, column]
                if !cell.isContinuation, !cell.character.isASCII,
                   Self.ncursesCells(TextWidth.terminalForm(of: cell.character)).contains(where: { $0.count > Self.cellCharacters }) {
                    cells.append((row, column, cell))
                }
            }
        }
        guard !cells.isEmpty else { return }
        var out = "\u{1B}7"
        for (row, column, cell) in cells {
            out += "\u{1B}[\(row + 1);\(column + 1)H\u{1B}[\(sgr(cell.style))m" + TextWidth.terminalForm(of: cell.character)
        }
        emit(out + "\u{1B}8")
    }

    /// `attributes` as SGR parameters, for cells written around ncurses.
    private func sgr(_ style: CellStyle) -> String {
        var p = ["0"]
        if style.bold { p.append("1") }
        if style.dim { p.append("2") }
        if style.underline { p.append("4") }
        if style.reverse { p.append("7") }
        if colors, let color = RoleColors.foreground(style.role, colors: colorCount) { p.append(RoleColors.sgr(color)) }
        if let color = style.foreground { p.append(SGRText.parameters(color, background: false)) }
        if let color = style.background { p.append(SGRText.parameters(color, background: true)) }
        return p.joined(separator: ";")
    }

    private static func hasOwnColors(_ screen: Screen, row: Int) -> Bool {
        guard row < screen.rows else { return false }
        return (0..<screen.columns).contains { screen[row, $0].style.hasOwnColors }
    }

    /// Writes the cells in colours of their own (a preview's) straight to the terminal after
    /// ncurses' frame, as `rewriteMarks` does: the runs that changed, and all of them on
    /// rows ncurses repainted whole.
    private func rewriteColors(_ screen: Screen, _ runs: [ScreenRun], repainted: Set<Int>) {
        var pieces: [(row: Int, column: Int, style: CellStyle, text: String)] = runs.map { ($0.row, $0.column, $0.style, form($0.cells)) }
        for row in repainted where row < screen.rows && !runs.contains(where: { $0.row == row }) {
            for column in 0..<screen.columns where screen[row, column].style.hasOwnColors && !screen[row, column].isContinuation {
                pieces.append((row, column, screen[row, column].style, form([screen[row, column]])))
            }
        }
        guard !pieces.isEmpty else { return }
        var out = "\u{1B}7"
        for piece in pieces { out += "\u{1B}[\(piece.row + 1);\(piece.column + 1)H\u{1B}[\(sgr(piece.style))m" + piece.text }
        emit(out + "\u{1B}8")
    }

    /// Cells as the terminal is sent them (`TextWidth.terminalForm`; `?` in ASCII mode).
    private func form(_ cells: [Cell]) -> String {
        cells.map { cell in
            unicode ? TextWidth.terminalForm(of: cell.character) : (cell.character.isASCII ? String(cell.character) : "?")
        }.joined()
    }

    /// The pictures the last frame placed (sixel, kitty).
    private var lastImages: [ScreenImage] = []

    // MARK: The terminal's pixels

    /// The terminal's cell in pixels: from the kernel's window size (`TIOCGWINSZ`, which
    /// xterm, kitty and others fill in), else, when `ask`, from the terminal's answers to
    /// `CSI 16 t` and `CSI 14 t` (followed by `CSI c`, which every terminal answers, so a
    /// terminal that ignores the others costs one round trip, not the whole wait). Keys the
    /// user typed meanwhile go back to curses in their order (`ungetch`), for `readKeys`.
    func measureCell(ask: Bool, wait: Double = 0.5) -> CellPixels? {
        var width: Int32 = 0, height: Int32 = 0, columns: Int32 = 0, rows: Int32 = 0
        if rchat_window_pixels(1, &width, &height, &columns, &rows) == 0, width > 0, height > 0,
           let cell = CellPixels(area: Int(width), Int(height), columns: Int(columns), rows: Int(rows)) {
            return cell
        }
        guard ask else { return nil }
        emit(TerminalReplies.query)
        var bytes: [UInt8] = []
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        while !TerminalReplies(parsing: bytes).complete {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let left = wait - (Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9)
            guard left > 0 else { break }
            var input = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            let n = poll(&input, 1, Int32(left * 1000) + 1)
            if n < 0 && errno == EINTR { continue }
            guard n > 0, input.revents & Int16(POLLIN) != 0 else { break }
            var buffer = [UInt8](repeating: 0, count: 256)
            let got = read(0, &buffer, buffer.count)
            guard got > 0 else { break }
            bytes += buffer[0..<got]
        }
        let replies = TerminalReplies(parsing: bytes)
        // Pushed back last byte first: curses returns the most recently pushed first.
        for byte in replies.rest.reversed() { _ = ungetch(Int32(byte)) }
        ungotten = !replies.rest.isEmpty
        let size = self.size
        return replies.cellPixels(columns: size.columns, rows: size.rows)
    }

    /// Keys given back to curses by `measureCell`, not yet read: poll() would not see them.
    private(set) var ungotten = false

    /// terminfo's `Tc` or `RGB`: the terminal takes 24-bit colour.
    var trueColor: Bool { rchat_terminfo_flag("Tc") == 1 || rchat_terminfo_flag("RGB") == 1 }

    private func attributes(_ style: CellStyle) -> UInt32 {
        var a: UInt32 = 0
        if style.bold { a |= rchat_a_bold() }
        if style.reverse { a |= rchat_a_reverse() }
        if style.dim { a |= rchat_a_dim() }
        if style.underline { a |= rchat_a_underline() }
        if colors, RoleColors.foreground(style.role, colors: colorCount) != nil { a |= rchat_color_pair(Int32(style.role.rawValue)) }
        return a
    }

    private func setCursor(visible: Bool) {
        guard cursorShown != visible else { return }
        curs_set(visible ? 1 : 0)
        cursorShown = visible
    }

    /// Every key waiting now (never blocks).
    func readKeys() -> [Key] {
        ungotten = false
        var keys: [Key] = []
        while keys.count < 4096 {
            if unicode {
                var ch: wint_t = 0
                let r = get_wch(&ch)
                if r == ERR { break }
                if r == KEY_CODE_YES, Int32(bitPattern: ch) == KEY_MOUSE { keys += mousePrefix; continue }
                let key = r == KEY_CODE_YES ? functionKey(Int32(bitPattern: ch)) : KeyDecoder.character(UInt32(ch))
                if let key { keys.append(key) }
            } else {
                let c = getch()
                if c == ERR { break }
                if c == KEY_MOUSE { keys += mousePrefix; continue }
                // Bytes beyond ASCII are not characters in this locale: skip them.
                let key = c >= KEY_MIN ? functionKey(c) : (c < 128 ? KeyDecoder.character(UInt32(c)) : nil)
                if let key { keys.append(key) }
            }
        }
        // Curses hands over a sequence it does not know as Esc and characters.
        return paste.fold(KeyDecoder.folding(keys))
    }

    /// The terminfo entry's `kmous` (`ESC [ <` in xterm's, `ESC [ M` in others) as keys:
    /// curses reports those bytes as KEY_MOUSE and leaves the rest of the report in the
    /// input, so they are handed back for KeyDecoder to read the report whole.
    private lazy var mousePrefix: [Key] = {
        guard let string = tigetstr("kmous"), Int(bitPattern: string) != -1 else { return [] }
        return String(cString: string).unicodeScalars.map { $0 == "\u{1B}" ? .escape : .character(Character($0)) }
    }()

    private func functionKey(_ code: Int32) -> Key? {
        KeyDecoder.functionKey(code) ?? extendedKeys[code]
    }

    /// Writes a bell or a clipboard copy between frames; an OSC one only where the terminal
    /// takes OSC sequences.
    func perform(_ effect: TerminalEffect) {
        guard osc || !effect.needsOSC else { return }
        if case .mouseReporting(let on) = effect {
            guard on != mouseReporting else { return }
            mouseReporting = on
        }
        emit(effect.sequence)
    }

    /// Ctrl-Z (the view reads keys raw, so the terminal sends no SIGTSTP itself): the
    /// terminal goes back as it was, the job stops as the terminal driver would stop it, and
    /// when it is continued (`fg`) the modes come back; the caller redraws everything.
    func suspend() {
        handOver()
        kill(0, SIGTSTP)
        // Continued: back into program mode, with the modes end() turned off.
        takeBack()
    }

    /// Gives the terminal to a program run in the foreground (the editor for Ctrl-X Ctrl-E):
    /// as the shell has it, none of our modes. `takeBack` when it is done.
    func handOver() { leave() }

    /// Program mode and our modes again after `handOver`; the caller redraws everything.
    func takeBack() {
        refresh()
        enterModes()
        last = nil
        cursorShown = nil
        lastTitle = ""
    }

    /// Why the view cannot run on this terminal type, as one line for the user; nil when it
    /// can. Asked before anything is drawn: `initscr` itself would end the process on a type
    /// it cannot find, and on one that cannot place the cursor (`dumb`) it would draw every
    /// frame as one collapsed line.
    static func problem(term: String?) -> String? {
        let help = "or use the commands (rchat --help)"
        guard let term, !term.isEmpty else {
            return "rchat: TERM is not set, so the view cannot draw; set it to your terminal's type (for example xterm-256color), \(help)"
        }
        switch rchat_terminal_check(term) {
        case 0: return nil
        case 1: return "rchat: this system does not know the terminal type '\(TerminalText.sanitized(term, breaks: .shown))'; set TERM to one it knows (for example xterm-256color), \(help)"
        case 2: return "rchat: this system has no terminal descriptions (terminfo) for the view; install ncurses-base, \(help)"
        default: return "rchat: the terminal type '\(TerminalText.sanitized(term, breaks: .shown))' cannot place text on the screen; run the view in a full-screen terminal, \(help)"
        }
    }

    /// Puts the terminal back: cursor, attributes, cooked mode, the title; and no last frame
    /// left over the shell where there is no alternate screen to take it away.
    func end() {
        leave()
        if osc { emit("\u{1B}[23;0t") }
    }

    /// The terminal as the shell wants it: cooked mode, cursor, no modes of ours, and no
    /// last frame left over the shell where there is no alternate screen to take it away.
    private func leave() {
        if lastImages.contains(where: { $0.kind == .kitty }) { emit(ImageWrites.kittyDeleteAll) }
        lastImages = []
        attrset(0)
        curs_set(1)
        endwin()
        rchat_clear_unless_alternate_screen()
        if osc {
            emit(BracketedPaste.disable)
            emit(KeyDecoder.focusReportingOff)
            if mouseReporting { emit(KeyDecoder.mouseReportingOff) }
        }
    }

    private func emit(_ sequence: String) {
        var bytes = Array(sequence.utf8)
        _ = Glibc.write(1, &bytes, bytes.count)
    }
}
