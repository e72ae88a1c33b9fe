import CEpoll
import Glibc
import RChatCore
import Synchronization

/// Something the event loop wakes when its descriptor is ready.
public protocol EventSource: AnyObject {
    func handleEvents(_ events: UInt32)
}

/// Readiness bits as the loop reports them.
public enum Readiness {
    public static let readable = RCHAT_EPOLLIN
    public static let writable = RCHAT_EPOLLOUT
    public static let error = RCHAT_EPOLLERR
    public static let hangUp = RCHAT_EPOLLHUP | RCHAT_EPOLLRDHUP
}

/// A single-threaded epoll loop with timers, an eventfd wake-up and an end-of-iteration
/// phase. Everything except `stop()`/`wake()` must be called on the loop's thread (`owner`
/// checks it in debug builds once `run()` has claimed the thread).
///
/// `@unchecked Sendable`: other threads hold the loop only to call `stop()` and `wake()`
/// (an atomic flag and an eventfd write); the rest is confined to the loop thread, which
/// no lock could express without putting one on every event.
///
/// Each iteration: wait → dispatch ready descriptors → run due timers → run the
/// `beforeFlush` hooks (the relay commits persistence here) → flush every connection that
/// queued output → close what was closed. Output thus never leaves before the work that
/// produced it is durable, and many frames leave in one write.
public final class EventLoop: @unchecked Sendable {
    private let epfd: Int32
    private let wakeFD: Int32
    private var sources: [Int32: EventSource] = [:]
    private var timers: [Timer] = []
    private var nextTimerID = 0
    private let stopRequested = Atomic<Bool>(false)
    private var flushQueue: [StreamConnection] = []
    private var closingFDs: [Int32] = []
    /// Run once per iteration before output is flushed.
    public var beforeFlush: [() -> Void] = []
    /// Set while dispatching: the monotonic time the current iteration woke at.
    public private(set) var now: Double = monotonicSeconds()
    /// The thread `run()` runs on: the only one that may touch the loop's state meanwhile.
    public let owner = ThreadOwner("event loop")
    /// One read buffer for every connection on this loop (they read on its thread only).
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)

    private struct Timer {
        let id: Int
        var deadline: Double
        let interval: Double?
        let action: () -> Void
    }

    public init() throws(NetError) {
        epfd = rchat_epoll_create()
        guard epfd >= 0 else { throw NetError("epoll_create1") }
        wakeFD = rchat_eventfd()
        guard wakeFD >= 0 else { throw NetError("eventfd") }
        guard rchat_epoll_add(epfd, wakeFD, RCHAT_EPOLLIN) == 0 else { throw NetError("epoll_ctl") }
    }

    deinit {
        Glibc.close(wakeFD)
        Glibc.close(epfd)
        readBuffer.deallocate()
    }

    // MARK: descriptors

    public func register(_ fd: Int32, events: UInt32, source: EventSource) throws(NetError) {
        owner.check()
        guard rchat_epoll_add(epfd, fd, events) == 0 else { throw NetError("epoll_ctl add") }
        sources[fd] = source
    }

    public func modify(_ fd: Int32, events: UInt32) {
        owner.check()
        _ = rchat_epoll_mod(epfd, fd, events)
    }

    /// Stops watching `fd` now and closes it at the end of the iteration, so that a new
    /// connection cannot reuse the number while events for the old one are still queued.
    public func closeLater(_ fd: Int32) {
        owner.check()
        _ = rchat_epoll_del(epfd, fd)
        sources[fd] = nil
        closingFDs.append(fd)
    }

    public var sourceCount: Int { sources.count }

    // MARK: timers

    /// Runs `action` after `seconds`, and then every `seconds` if `repeating`.
    @discardableResult
    public func schedule(after seconds: Double, repeating: Bool = false, _ action: @escaping () -> Void) -> Int {
        owner.check()
        nextTimerID += 1
        timers.append(Timer(id: nextTimerID, deadline: monotonicSeconds() + seconds,
                            interval: repeating ? seconds : nil, action: action))
        return nextTimerID
    }

    public func cancelTimer(_ id: Int) {
        owner.check()
        timers.removeAll { $0.id == id }
    }

    // MARK: output

    /// Asks for `connection`'s queued output to be written at the end of this iteration.
    public func needsFlush(_ connection: StreamConnection) {
        owner.check()
        flushQueue.append(connection)
    }

    // MARK: running

    /// Wakes a waiting loop; safe from any thread.
    public func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    /// Makes `run()` return after the current iteration; safe from any thread.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wake()
    }

    public func run() {
        owner.claim()
        defer { owner.release() }
        var fds = [Int32](repeating: 0, count: 256)
        var events = [UInt32](repeating: 0, count: 256)
        while !stopRequested.load(ordering: .acquiring) {
            let timeout = waitTimeoutMilliseconds()
            let n = Int(fds.withUnsafeMutableBufferPointer { f in
                events.withUnsafeMutableBufferPointer { e in
                    rchat_epoll_wait(epfd, f.baseAddress!, e.baseAddress!, 256, timeout)
                }
            })
            now = monotonicSeconds()
            if n < 0 && rchat_errno() != EINTR { break }
            for i in 0..<max(n, 0) {
                let fd = fds[i]
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                    continue
                }
                // A source closed earlier in this batch has no entry any more.
                sources[fd]?.handleEvents(events[i])
            }
            runDueTimers()
            finishIteration()
        }
        finishIteration()
    }

    /// Hooks, flushes and deferred closes; also what `run()` does once more on the way out.
    public func finishIteration() {
        owner.check()
        for hook in beforeFlush { hook() }
        if !flushQueue.isEmpty {
            let queue = flushQueue
            flushQueue.removeAll(keepingCapacity: true)
            for connection in queue { connection.flush() }
        }
        if !closingFDs.isEmpty {
            for fd in closingFDs { Glibc.close(fd) }
            closingFDs.removeAll(keepingCapacity: true)
        }
    }

    private func waitTimeoutMilliseconds() -> Int32 {
        if !flushQueue.isEmpty || !closingFDs.isEmpty { return 0 }
        guard let next = timers.map(\.deadline).min() else { return -1 }
        let ms = (next - monotonicSeconds()) * 1000
        return ms <= 0 ? 0 : Int32(min(ms.rounded(.up), 60_000))
    }

    private func runDueTimers() {
        guard !timers.isEmpty else { return }
        let t = monotonicSeconds()
        let due = timers.filter { $0.deadline <= t }
        guard !due.isEmpty else { return }
        timers.removeAll { $0.deadline <= t && $0.interval == nil }
        for i in timers.indices where timers[i].deadline <= t {
            timers[i].deadline = t + timers[i].interval!
        }
        for timer in due { timer.action() }
    }
}
