import Glibc
import RChatCore
import CNcursesw
import Synchronization

/// A signal that should end the view writes here, so the one UI thread sees it in poll()
/// and restores the terminal before leaving. Atomic: the handler reads it on whatever
/// thread the signal lands (a lock-free load is safe in a signal handler; a lock is not).
private let stopPipeWrite = Atomic<Int32>(-1)

private func stopHandler(_: Int32) {
    var byte: UInt8 = 1
    _ = write(stopPipeWrite.load(ordering: .relaxed), &byte, 1)
}

/// Runs the full-screen view until the user quits (or SIGTERM/SIGINT/SIGHUP). One thread
/// waits with poll() on the keyboard and on the model's wake-up descriptor. Returns the
/// process exit code.
public func runTUI(model: ChatModel, options: TUIOptions = TUIOptions()) -> Int32 {
    guard isatty(0) == 1, isatty(1) == 1 else {
        var message = Array("rchat: the full-screen view needs a terminal (see rchat --help for commands)\n".utf8)
        _ = write(2, &message, message.count)
        return 1
    }
    if let problem = CursesTerminal.problem(term: getenv("TERM").map { String(cString: $0) }) {
        var message = Array((problem + "\n").utf8)
        _ = write(2, &message, message.count)
        return 1
    }
    var pipeFDs: [Int32] = [-1, -1]
    guard pipe(&pipeFDs) == 0 else { return 1 }
    defer { close(pipeFDs[0]); close(pipeFDs[1]) }
    for fd in pipeFDs { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    stopPipeWrite.store(pipeFDs[1], ordering: .relaxed)
    // Installed before initscr, so ncurses leaves them to us.
    let stopSignals = [SIGTERM, SIGINT, SIGHUP]
    let previous = stopSignals.map { signal($0, stopHandler) }
    defer { for (sig, handler) in zip(stopSignals, previous) { signal(sig, handler) } }

    let environment = terminalEnvironment()
    if let home = options.draftDirectory { ChatView.removeLeftovers(in: home) }
    let terminal = CursesTerminal(environment: environment)
    defer { terminal.end() }
    // SIGWINCH only while the loop waits (`rchat_poll_letting_resize_in`): a resize while it
    // draws is never slept through.
    _ = rchat_block_resize(1)
    defer { _ = rchat_block_resize(0) }
    // ... and whichever thread takes it, a byte on this pipe wakes the wait.
    var resizeFDs: [Int32] = [-1, -1]
    guard pipe(&resizeFDs) == 0 else { return 1 }
    defer { close(resizeFDs[0]); close(resizeFDs[1]) }
    for fd in resizeFDs { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    _ = rchat_resize_state()   // (emitted for the handler: shim.h)
    _ = rchat_chain_resize(resizeFDs[1])
    defer { _ = rchat_chain_resize(-1) }
    let size = terminal.size
    let view = ChatView(model: model, options: options, glyphs: terminal.unicode ? .unicode : .ascii,
                        rows: size.rows, columns: size.columns)
    var full = true
    /// The cell's pixels, asked of the terminal only where pictures could be drawn.
    let asksPixels = PreviewStyle.drawsPixels(options.environment)
    func measure() {
        view.terminalTraits = TerminalTraits(cell: terminal.measureCell(ask: asksPixels), trueColor: terminal.trueColor)
    }
    measure()
    /// After the terminal was away (the editor, Ctrl-Z) or was resized: the window, and its
    /// font, may have changed meanwhile.
    func refit() {
        let size = terminal.size
        view.resize(rows: size.rows, columns: size.columns)
        measure()
        full = true
    }
    while !view.quitRequested {
        terminal.draw(view.frame(), full: full || view.wantsFullRedraw)
        for effect in view.takeEffects() { terminal.perform(effect) }
        full = false
        view.wantsFullRedraw = false
        if let draft = view.takeEditorRequest(), let directory = options.draftDirectory {
            // The editor has the terminal until it exits; then the whole screen again.
            terminal.handOver()
            _ = rchat_block_resize(0)   // the editor sees its resizes
            let outcome = ExternalEditor(environment: environment, directory: directory).edit(draft)
            _ = rchat_block_resize(1)
            terminal.takeBack()
            _ = rchat_chain_resize(resizeFDs[1])
            refit()
            view.finishEditing(outcome)
            continue
        }

        var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)]
        fds.append(pollfd(fd: view.previewDescriptor, events: Int16(POLLIN), revents: 0))
        fds.append(pollfd(fd: resizeFDs[0], events: Int16(POLLIN), revents: 0))
        if model.wakeDescriptor >= 0 { fds.append(pollfd(fd: model.wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
        var timeout: Int32 = -1
        if let deadline = view.nextDeadline {
            timeout = Int32(clamping: max(0, deadline - Int64(time(nil))) * 1000 + 50)
        }
        if let soon = view.pollMilliseconds, timeout < 0 || soon < timeout { timeout = soon }
        if terminal.ungotten { timeout = 0 }   // keys typed while the terminal was asked its pixels
        let n = rchat_poll_letting_resize_in(&fds, nfds_t(fds.count), timeout)
        // SIGWINCH, here or on another thread: curses now has KEY_RESIZE for us.
        var resized = fds[3].revents & Int16(POLLIN) != 0
        if resized {
            var byte: UInt8 = 0
            while read(resizeFDs[0], &byte, 1) == 1 {}
        }
        resized = resized || (n < 0 && errno == EINTR)
        if fds[1].revents != 0 { break }
        if fds[2].revents & Int16(POLLIN) != 0 { view.previewsRendered() }   // the next frame shows it
        if fds.count > 4, fds[4].revents & Int16(POLLIN) != 0 {
            view.handle(model.drainEvents())
        }
        if fds[0].revents & Int16(POLLIN) != 0 || resized || terminal.ungotten {
            for key in terminal.readKeys() {
                if key == .resize {
                    refit()
                } else {
                    view.handle(key)
                }
                if view.suspendRequested {
                    terminal.suspend()
                    view.suspendRequested = false
                    refit()
                }
                if view.quitRequested { break }
            }
        }
        if fds[0].revents & Int16(POLLHUP | POLLERR) != 0 { break }   // the terminal went away
    }
    view.cancelRecording()   // a recorder never outlives the view
    view.postDesktopAlerts(all: true)   // held ones: the linger sees only what arrives after
    view.saveDrafts()   // a signal or a closed terminal keeps what was typed, as quitting does
    return 0
}

private func terminalEnvironment() -> [String: String] {
    var env: [String: String] = [:]
    for key in ["NO_COLOR", "TERM", "VISUAL", "EDITOR"] {
        if let value = getenv(key) { env[key] = String(cString: value) }
    }
    return env
}
