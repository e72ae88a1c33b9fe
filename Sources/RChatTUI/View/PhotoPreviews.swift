import Foundation
import Glibc
import RChatCore
import RChatMedia

/// Photos' previews, decoded and rendered on a thread of their own and kept by message,
/// size and kind: a frame only looks them up, so one with previews on screen costs what
/// one without does. When a render finishes, a byte on `wakeDescriptor` tells the backend
/// to draw again. The thread runs while there is work and ends when there is none.
final class PhotoPreviews: @unchecked Sendable {   // every field below is guarded by `condition`
    private enum Entry {
        case pending
        case ready(ShownPreview)
        /// Not a picture the decoders read (or too large): no preview, not tried again.
        case none
    }

    private struct Job {
        var key: String
        var path: String
        var columns: Int
        var rows: Int
        var mode: PreviewMode
        var cell: CellPixels?
    }

    /// Previews kept; the oldest asked for goes first.
    static let capacity = 64

    private let condition = NSCondition()
    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    private var jobs: [Job] = []
    private var working = false
    private let pipeFDs: [Int32]

    init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        } else {
            fds = [-1, -1]
        }
        pipeFDs = fds
    }

    deinit { for fd in pipeFDs where fd >= 0 { close(fd) } }

    /// Readable when a preview was rendered since `drain()`.
    var wakeDescriptor: Int32 { pipeFDs[0] }

    /// Makes `wakeDescriptor` readable: something else done off the UI thread (a voice
    /// message's length) wants a frame too.
    func wake() {
        var byte: UInt8 = 1
        _ = write(pipeFDs[1], &byte, 1)
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while pipeFDs[0] >= 0, read(pipeFDs[0], &buffer, buffer.count) > 0 {}
    }

    /// Which preview it is: a picture in a box of cells of a size (pixels drawn for another
    /// cell would be the wrong size).
    static func key(_ id: MessageID, columns: Int, rows: Int, mode: PreviewMode, cell: CellPixels? = nil) -> String {
        "\(id.hex) \(columns)x\(rows) \(mode) \(cell.map(\.description) ?? "-")"
    }

    /// The preview when it is ready; otherwise asks for it (once) and returns nil, as for a
    /// file that is no picture.
    func preview(of id: MessageID, path: String, columns: Int, rows: Int, mode: PreviewMode, cell: CellPixels? = nil) -> ShownPreview? {
        let key = Self.key(id, columns: columns, rows: rows, mode: mode, cell: cell)
        condition.lock()
        defer { condition.unlock() }
        switch entries[key] {
        case .ready(let preview)?: return preview
        case .pending?, .none?: return nil
        case nil:
            entries[key] = .pending
            order.append(key)
            jobs.append(Job(key: key, path: path, columns: columns, rows: rows, mode: mode, cell: cell))
            if !working {
                working = true
                let thread = Thread { [self] in work() }
                thread.name = "rchat-previews"
                thread.start()
            }
            return nil
        }
    }

    /// Whether every preview asked for is rendered (or known to be none).
    var idle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !working
    }

    private func work() {
        while true {
            condition.lock()
            guard !jobs.isEmpty else {
                working = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            let result = Self.render(job)
            condition.lock()
            // Kept only while still wanted: it may have been dropped as the oldest meanwhile.
            if entries[job.key] != nil { entries[job.key] = result.map(Entry.ready) ?? Entry.none }
            while order.count > Self.capacity { entries[order.removeFirst()] = nil }
            condition.unlock()
            wake()
        }
    }

    private static func render(_ job: Job) -> ShownPreview? {
        guard let image = try? Images.decode(path: job.path) else { return nil }
        switch TerminalPreview.render(image, columns: job.columns, rows: job.rows, mode: job.mode, cell: job.cell) {
        case .rows(let rows):
            return .cells(rows.map(SGRText.runs))
        case .graphics(let escape, let rows, let columns):
            return .graphics(ScreenImage(row: 0, column: 0, rows: rows, columns: columns,
                                         kind: job.mode == .kitty ? .kitty : .sixel, key: job.key, escape: escape))
        }
    }
}
