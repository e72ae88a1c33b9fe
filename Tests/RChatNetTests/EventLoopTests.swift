import Foundation
import RChatCore
import RChatNet
import XCTest

/// Drives the loop from a test: a listener, an echoing connection and a blocking client.
final class EventLoopTests: XCTestCase {
    final class Echo: StreamConnectionDelegate {
        var closed = false
        var violations: [FrameError] = []
        func connection(_ c: StreamConnection, didReceive frame: [UInt8]) { c.send(frame.reversed()) }
        func connection(_ c: StreamConnection, violated error: FrameError) { violations.append(error) }
        func connectionDidClose(_ c: StreamConnection) { closed = true }
    }

    func testEchoOverLoopbackWithTimersAndStop() throws {
        NetSetup.ignoreBrokenPipes()
        let loop = try EventLoop()
        let listener = try TCPListener(host: "127.0.0.1", port: 0, loop: loop)
        XCTAssertGreaterThan(listener.port, 0)
        let echo = Echo()
        var connections: [StreamConnection] = []
        listener.onAccept = { fd, _ in
            let c = try! StreamConnection(fd: fd, loop: loop, maximumFrameBytes: 1000)
            c.delegate = echo
            connections.append(c)
        }
        let results = Results()
        var ticks = 0
        // The client thread only flags that it is done; a timer on the loop stops it.
        loop.schedule(after: 0.005, repeating: true) {
            ticks += 1
            if results.done.withLock({ $0 }) { loop.stop() }
        }
        let port = listener.port
        let done = expectation(description: "client done")
        Thread {
            do {
                let s = try BlockingSocket(host: "127.0.0.1", port: port)
                try s.writeAll(FrameCodec.encode([1, 2, 3]) + FrameCodec.encode([4]))
                var decoder = FrameDecoder(maximumBodyBytes: 1000)
                let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 8)
                defer { buf.deallocate() }
                while results.frames.withLock({ $0.count }) < 2 {
                    let n = try s.read(into: buf)
                    if n == 0 { break }
                    decoder.append(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
                    while let f = try decoder.next() { results.frames.withLock { $0.append(f) } }
                }
                // Then an oversized prefix: the server closes.
                try s.writeAll([0, 0, 0x10, 0])
                let eof = try s.read(into: buf) == 0
                results.eof.withLock { $0 = eof }
            } catch {
                XCTFail("\(error)")
            }
            done.fulfill()
            results.done.withLock { $0 = true }
        }.start()
        loop.run()
        wait(for: [done], timeout: 5)
        XCTAssertEqual(results.frames.withLock { $0 }, [[3, 2, 1], [4]])
        XCTAssertTrue(results.eof.withLock { $0 })
        XCTAssertEqual(echo.violations, [.oversized(announced: 4096, maximum: 1000)])
        XCTAssertTrue(echo.closed)
        XCTAssertGreaterThan(ticks, 0)
        listener.close()
    }

    /// While `run()` runs, the loop's state is its thread's: a call from another thread is
    /// reported (debug builds); before `run()` and after it returns, the maker's thread sets
    /// the loop up and takes it down unreported.
    func testTheLoopReportsACallFromAnotherThreadWhileItRuns() throws {
        #if !DEBUG
        throw XCTSkip("the check is compiled out of release builds")
        #endif
        let loop = try EventLoop()
        let running = Locked(false)
        loop.schedule(after: 0) { running.withLock { $0 = true } }
        let unsafeLoop = loop
        let ended = DispatchSemaphore(value: 0)
        let whileRunning = ThreadOwner.violations {
            Thread {
                unsafeLoop.run()
                ended.signal()
            }.start()
            let deadline = Date(timeIntervalSinceNow: 10)
            while !running.withLock({ $0 }) && Date() < deadline { usleep(1000) }
            XCTAssertTrue(running.withLock { $0 }, "the loop did not start")
            // Only a system call behind the check: the loop thread's state is not raced.
            loop.modify(-1, events: 0)
            loop.stop()
            XCTAssertEqual(ended.wait(timeout: .now() + 10), .success, "the loop did not stop")
        }
        let afterwards = ThreadOwner.violations { loop.modify(-1, events: 0) }
        XCTAssertEqual(whileRunning.map(\.owner), ["event loop"])
        XCTAssertEqual(whileRunning.map(\.function), ["modify(_:events:)"])
        XCTAssertEqual(afterwards, [], "after run() the loop is anyone's again")
    }

    /// Written by the client thread, read by the loop's timer and the test.
    final class Results: Sendable {
        let frames = Locked<[[UInt8]]>([])
        let eof = Locked(false)
        let done = Locked(false)
    }
}
