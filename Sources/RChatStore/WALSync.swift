import Foundation
import Glibc
import Synchronization

/// Group commit: makes commits durable off the thread that made them.
///
/// A transaction committed with `Store.transactionSyncedLater` is in the WAL file (it
/// survives the process being killed) but may not be on the disk yet. `request()` asks this
/// object's thread to `fdatasync` the WAL, which makes every commit written before the call
/// durable, and reports the request's number once it is: the committing thread goes on with
/// its next batch meanwhile, instead of waiting for the disk after each one. Whoever
/// committed acts on nothing of it — acknowledgement, receipt, status shown — before then.
///
/// Requests that queue while a sync runs are answered together by the next one.
///
/// `@unchecked Sendable`: the request counters are guarded by `condition`, an `NSCondition`
/// because the sync thread waits on it for requests (`Mutex` has no wait); the WAL file is
/// in a `Mutex`.
public final class WALSync: @unchecked Sendable {
    /// `.success(n)`: every commit before request `n` (and those before it) is durable.
    public typealias Report = @Sendable (Result<UInt64, StoreError>) -> Void

    private let walPath: String
    private let report: Report
    private let condition = NSCondition()
    private var requested: UInt64 = 0
    private var synced: UInt64 = 0
    private var running = false
    private var stopping = false
    /// The WAL file's descriptor, opened on first use (-1 until then): the sync thread and
    /// `syncNow` use it, one at a time.
    private let file = Mutex<Int32>(-1)

    public init(store: Store, report: @escaping Report) {
        walPath = store.path + "-wal"
        self.report = report
    }

    deinit { file.withLock { if $0 >= 0 { close($0) } } }

    /// The number of the last request (0: none yet).
    public var lastRequested: UInt64 { condition.withLock { requested } }

    /// Asks for a sync covering every commit made so far; returns its number.
    public func request() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        requested += 1
        if !running {
            running = true
            let thread = Thread { [self] in run() }
            thread.start()
        }
        condition.signal()
        return requested
    }

    /// Syncs on the calling thread (for what cannot wait, and at start-up): every commit
    /// made so far is durable when it returns.
    public func syncNow() throws(StoreError) {
        try file.withLock { (descriptor: inout Int32) throws(StoreError) in try syncFile(&descriptor) }
    }

    /// Ends the thread once the requests made so far are answered.
    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while requested == synced && !stopping { condition.wait() }
            if requested == synced { running = false; condition.unlock(); return }
            let target = requested
            condition.unlock()
            let result: Result<UInt64, StoreError>
            do {
                try syncNow()
                result = .success(target)
            } catch {
                result = .failure(error)
            }
            condition.withLock { synced = target }
            report(result)
        }
    }

    /// fdatasync of the WAL file (it is the same file however often SQLite rewinds it;
    /// opened again should it have been replaced). No WAL file: nothing waits to be synced.
    private func syncFile(_ descriptor: inout Int32) throws(StoreError) {
        var onDisk = stat()
        guard stat(walPath, &onDisk) == 0 else {
            if errno == ENOENT { return }
            throw StoreError.cannotSync(path: walPath, reason: String(cString: strerror(errno)))
        }
        var open = stat()
        if descriptor >= 0, fstat(descriptor, &open) != 0 || open.st_ino != onDisk.st_ino || open.st_dev != onDisk.st_dev {
            close(descriptor)
            descriptor = -1
        }
        if descriptor < 0 {
            descriptor = Glibc.open(walPath, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw StoreError.cannotSync(path: walPath, reason: String(cString: strerror(errno))) }
        }
        guard fdatasync(descriptor) == 0 else { throw StoreError.cannotSync(path: walPath, reason: String(cString: strerror(errno))) }
    }
}
