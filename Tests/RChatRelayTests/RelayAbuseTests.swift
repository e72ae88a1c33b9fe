import CEpoll
import Foundation
import RChatCore
import RChatCrypto
import RChatNet
import RChatRelay
import RChatRelayClient
import RChatWire
import Synchronization
import XCTest

/// A real `rchat-relay` under attack on loopback: every attack is bounded in count and time,
/// honest clients are served throughout, and the relay's memory (VmRSS from /proc) comes
/// back to where it was. Each test prints its figures as `figure:` lines.
final class RelayAbuseTests: XCTestCase {
    var relay: RelayProcess!

    override func tearDown() { relay?.stop(signal: SIGKILL); relay = nil }

    private func start(_ arguments: [String]) throws -> RelayAddress {
        relay = RelayProcess()
        let address = try relay.start(arguments)
        try assertRelayServes(address) // warm: what serving allocates once is not counted as abuse
        // Its two connections gone (they count against 127.0.0.1's limit while open).
        XCTAssertNotNil(waitFor(timeout: 5) { self.logCount(") closed; ") >= 2 ? true : nil }, relay.stderr)
        return address
    }

    private func logCount(_ fragment: String) -> Int { relay.stderr.components(separatedBy: fragment).count - 1 }

    // MARK: connections

    func testConnectionsPastTheLimitAreRefusedAtOnceWhileTheRestAreServed() throws {
        let address = try start(["--max-connections", "24", "--max-connections-per-address", "100"])
        let before = try memory()
        let pair = try link(address)
        defer { pair.a.close(); pair.b.close() }
        var held: [BlockingSocket] = []
        for _ in 0..<22 { held.append(try BlockingSocket(host: "127.0.0.1", port: address.port)) }
        XCTAssertNotNil(waitFor(timeout: 5) { () -> Bool? in
            guard let probe = try? RawClient(address) else { return nil }
            return probe.expectClosedQuietly() == .busy ? true : nil
        }, "the relay took its 24")
        var latencies: [Double] = []
        for round in 0..<10 {
            for _ in 0..<30 {
                let started = monotonicSeconds()
                let refused = try RawClient(address)
                XCTAssertEqual(refused.expectClosed(timeout: 2), .busy)
                latencies.append(monotonicSeconds() - started)
            }
            // The 24 it serves are served meanwhile.
            let payload = Array("round \(round)".utf8)
            let seq = try pair.a.send(on: pair.link, payload)
            XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: seq, forwarded: true))
            guard case .delivery(let d)? = pair.b.nextEvent(timeout: 5) else { return XCTFail("no delivery in round \(round)") }
            XCTAssertEqual(d.payload, payload)
        }
        latencies.sort()
        let median = latencies[latencies.count / 2], worst = latencies.last!
        print("figure: refusal past --max-connections, connect to busy: median \(Int(median * 1e6)) µs, max \(Int(worst * 1e6)) µs over \(latencies.count)")
        XCTAssertLessThan(worst, 1, "refused at once, not after a timeout")
        held.removeAll()
        try assertMemorySettles(before, "300 refused connections")
    }

    func testOneHostCannotTakeEverySlot() throws {
        // The attack as it was: 1,024 sockets with fresh keys from one address, every one
        // authenticated. Only the first 32 (the default per-address limit) get in.
        let address = try start([])
        let before = try memory()
        var attackers: [RawClient] = []
        var refused = 0
        for _ in 0..<1_024 {
            do {
                attackers.append(try RawClient.authenticated(address))
            } catch {
                refused += 1
            }
        }
        print("figure: one address, 1,024 authenticating connections: \(attackers.count) served, \(refused) refused")
        XCTAssertEqual(attackers.count, 32)
        let last = try RawClient(address)
        XCTAssertEqual(last.expectClosed(timeout: 2), .busy, "refused at once from the full host")
        // Newcomers from other hosts are served while the attacker holds its share.
        let a = try RelayClient.connect(to: address, mailboxKey: .generate(), timeout: 5, from: "127.0.0.2")
        let b = try RelayClient.connect(to: address, mailboxKey: .generate(), timeout: 5, from: "127.0.0.3")
        defer { a.close(); b.close() }
        let code = Random.bytes(32)
        try a.present([code])
        try b.present([code])
        XCTAssertEqual(a.nextEvent(timeout: 5), .drained)
        guard case .linked? = a.nextEvent(timeout: 5) else { return XCTFail("the newcomers did not link") }
        XCTAssertEqual(logCount("127.0.0.1 has 32 connections, its limit"), 1, "logged once per burst")
        attackers.removeAll()
        try assertMemorySettles(before, "1,024 connections from one host")
    }

    func testSlowlorisAndHalfOpenConnectionsAreClosedByTheTimeouts() throws {
        let address = try start(["--handshake-timeout", "1", "--frame-timeout", "0.5", "--max-connections-per-address", "100"])
        let before = try memory()
        // Slowloris: a frame begun and fed a byte at a time; half-open: connected, then silent.
        let slow = try (0..<20).map { _ in try RawClient(address) }
        let silent = try (0..<20).map { _ in try RawClient(address) }
        // A 256-byte frame, a byte every 50 ms: it would take 13 s.
        let dribbling = StopFlag()
        let descriptors = slow.map { $0.socket.fd }
        let dribbler = Thread {
            var sent = 0
            repeat {
                var byte: UInt8 = sent < 4 ? [0, 0, 1, 0][sent] : 0x52
                for fd in descriptors { _ = rchat_send(fd, &byte, 1) }
                sent += 1
            } while !dribbling.stopped(within: 0.05)
            dribbling.done.store(true, ordering: .releasing)
        }
        let started = monotonicSeconds()
        dribbler.start()
        for s in slow { XCTAssertEqual(s.expectClosed(timeout: 3), .timeout) }
        let slowClosed = monotonicSeconds() - started
        dribbling.stop()
        XCTAssertNotNil(waitFor(timeout: 2) { dribbling.done.load(ordering: .acquiring) ? true : nil })
        for s in silent { XCTAssertEqual(s.expectClosed(timeout: 3), .timeout) }
        let silentClosed = monotonicSeconds() - started
        print("figure: 20 slowloris closed within \(ms(slowClosed)) ms (frame timeout 500 ms); 20 half-open within \(ms(silentClosed)) ms (handshake timeout 1,000 ms)")
        XCTAssertLessThan(silentClosed, 2.5)
        try assertRelayServes(address)
        try assertMemorySettles(before, "slowloris and half-open connections")
    }

    /// Authenticated connections that say nothing and wait for nothing are closed; a client
    /// that pings, one with a code waiting and one with a link are not.
    func testIdleAuthenticatedConnectionsTimeOut() throws {
        let address = try start(["--idle-timeout", "1", "--max-connections-per-address", "100"])
        let before = try memory()
        var idle: [RawClient] = []
        for _ in 0..<10 {
            idle.append(try RawClient.authenticated(address))
        }
        let started = monotonicSeconds()
        let pinger = try RelayClient.connect(to: address, mailboxKey: .generate())
        let waiter = try RelayClient.connect(to: address, mailboxKey: .generate())
        let pair = try link(address)
        defer { pinger.close(); waiter.close(); pair.a.close(); pair.b.close() }
        try waiter.present([Random.bytes(32)])
        // As an engine does (every 60 s against the default 300 s), 4 times per timeout.
        let pinging = StopFlag()
        let pingLoop = Thread {
            var n: UInt64 = 0
            while (try? pinger.ping(n)) != nil, !pinging.stopped(within: 0.25) {
                n += 1
            }
            pinging.done.store(true, ordering: .releasing)
        }
        pingLoop.start()
        for s in idle { XCTAssertEqual(s.expectClosed(timeout: 3), .timeout) }
        let closedAfter = monotonicSeconds() - started
        print("figure: 10 idle authenticated connections closed within \(ms(closedAfter)) ms (idle timeout 1,000 ms)")
        // Twice the idle timeout later the others are still there.
        XCTAssertNil(waitFor(timeout: 2.5 - closedAfter) { pinger.isClosed ? true : nil }, "the pinging client lost its connection")
        pinging.stop()
        XCTAssertNotNil(waitFor(timeout: 2) { pinging.done.load(ordering: .acquiring) ? true : nil })
        XCTAssertGreaterThan(monotonicSeconds() - started, 2)
        XCTAssertFalse(pinger.isClosed)
        XCTAssertEqual(waiter.nextEvent(timeout: 0.1), .drained)
        XCTAssertFalse(waiter.isClosed, "a client with a code waiting is not idle")
        let seq = try pair.a.send(on: pair.link, [1])
        XCTAssertEqual(pair.a.nextEvent(timeout: 5), .sent(seq: seq, forwarded: true), "a linked pair is not idle")
        XCTAssertEqual(logCount("idle for 1.0 s"), 10, relay.stderr)
        try assertMemorySettles(before, "idle connections")
    }

    func testAClientThatNeverReadsIsDroppedWithinTheBound() throws {
        let limit = 256 << 10
        let address = try start(["--max-output-bytes", "\(limit)"])
        let before = try memory()
        let raw = try RawClient.authenticated(address)
        var small: Int32 = 4096
        setsockopt(raw.socket.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        // Pings, 2,048 to a write, never reading a pong; at most 64 MiB of them.
        var written = 0
        var dropped = false
        let started = monotonicSeconds()
        while written < 64 << 20 {
            var batch = ByteQueue()
            for i in 0..<2_048 { FrameCodec.append(raw.cipher!.seal(ClientMessage.ping(UInt64(i)).encoded()), to: &batch) }
            let bytes = batch.withUnreadBytes { Array($0) }
            do { try raw.write(bytes) } catch { dropped = true; break }
            written += bytes.count
        }
        XCTAssertTrue(dropped, "the relay never dropped a client that does not read (\(written) bytes of pings taken)")
        XCTAssertNotNil(waitFor(timeout: 5) { self.logCount("not reading") == 1 ? true : nil }, relay.stderr)
        let peak = try memory(field: "VmHWM")
        print("figure: a client that never reads, --max-output-bytes \(limit): dropped after \(written >> 10) KiB of pings in \(ms(monotonicSeconds() - started)) ms; relay peak RSS \(before) KiB before, \(peak) KiB at most (+\(peak - before) KiB)")
        XCTAssertLessThan(peak - before, 8 << 10, "what a non-reading client cost, in KiB")
        try assertRelayServes(address)
        try assertMemorySettles(before, "a client that never reads")
    }

    // MARK: pairing

    /// 400 connections × 256 random codes used to fill the relay-wide table (100,000) and
    /// every real pair was ignored. Spread over 13 addresses, within the per-address limit.
    func testPairingSurvivesAConnectionFloodOfRandomCodes() throws {
        let address = try start([])
        let before = try memory()
        var abusers: [RelayClient] = []
        for n in 0..<400 {
            let c = try RelayClient.connect(to: address, mailboxKey: .generate(), from: "127.0.1.\(n / 31 + 1)")
            for _ in 0..<16 { try c.present((0..<16).map { _ in Random.bytes(32) }, flush: false) }
            try c.ping(1)
            abusers.append(c)
        }
        for c in abusers {
            XCTAssertEqual(c.nextEvent(timeout: 5), .drained)
            XCTAssertEqual(c.nextEvent(timeout: 5), .pong(1), "all 256 codes taken in")
        }
        let loaded = try memory()
        print("figure: 102,400 codes waiting from 400 connections: relay RSS +\(loaded - before) KiB (\((loaded - before) * 1024 / 102_400) B a code)")
        let started = monotonicSeconds()
        let pair = try link(address)
        print("figure: a real pair linked \(ms(monotonicSeconds() - started)) ms after connecting, beside 102,400 codes waiting")
        pair.a.close(); pair.b.close()
        for c in abusers { c.close() }
        abusers.removeAll()
        try assertMemorySettles(before, "400 connections × 256 codes")
    }

    func testPendingCodesAreBoundedPerConnectionAndPerMailboxAndMatchedCodesLeave() throws {
        let address = try start(["--max-codes-per-connection", "8", "--max-codes-per-mailbox", "12"])
        let key = SigningKey.generate()
        let one = try RelayClient.connect(to: address, mailboxKey: key)
        let two = try RelayClient.connect(to: address, mailboxKey: key)
        let peer = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { one.close(); two.close(); peer.close() }
        for c in [one, peer] { XCTAssertEqual(c.nextEvent(timeout: 5), .drained) } // a mailbox's first connection
        let first = (0..<9).map { _ in Random.bytes(32) }
        try one.present(first)                      // 8 wait; the 9th is over the connection's share
        try one.eventsUntilPong()
        let second = (0..<8).map { _ in Random.bytes(32) }
        try two.present(second)                     // 4 wait; the rest are over the mailbox's share
        try two.eventsUntilPong()
        // The peer presents them all: only what waited links.
        try peer.present(Array(first[0..<8]))
        try peer.present([first[8]] + second)
        let linked = try peer.eventsUntilPong().compactMap { e -> [UInt8]? in
            if case .linked(_, let code) = e { return code } else { return nil }
        }
        XCTAssertEqual(Set(linked), Set(first[0..<8] + second[0..<4]))
        XCTAssertEqual(logCount("codes ignored: its connection has its share"), 1, relay.stderr)
        XCTAssertEqual(logCount("codes ignored: its mailbox has its share"), 1, relay.stderr)
        // Codes that matched left the table: the same connection has its whole share again.
        let again = (0..<8).map { _ in Random.bytes(32) }
        try one.present(again)
        try one.eventsUntilPong()
        try peer.present(again)
        XCTAssertEqual(try peer.eventsUntilPong().filter { if case .linked = $0 { true } else { false } }.count, 8)
        // A real pair still links while this mailbox holds its whole share.
        try two.present((0..<8).map { _ in Random.bytes(32) })
        try assertRelayServes(address)
    }

    func testLinkChurnIsBoundedPerMailbox() throws {
        let address = try start([])
        let before = try memory()
        let a = try RelayClient.connect(to: address, mailboxKey: .generate())
        let b = try RelayClient.connect(to: address, mailboxKey: .generate())
        XCTAssertEqual(a.nextEvent(timeout: 5), .drained)
        XCTAssertEqual(b.nextEvent(timeout: 5), .drained)
        // 7,168 links asked for as fast as two connections can: 256 codes waiting on one,
        // matched by the other, 28 times.
        let started = monotonicSeconds()
        var links = 0
        for round in 0..<28 {
            let codes = (0..<256).map { _ in Random.bytes(32) }
            for start in stride(from: 0, to: codes.count, by: 16) { try a.present(Array(codes[start..<(start + 16)]), flush: false) }
            try a.eventsUntilPong()
            for start in stride(from: 0, to: codes.count, by: 16) { try b.present(Array(codes[start..<(start + 16)]), flush: false) }
            try b.ping(UInt64(round))
            while let e = b.nextEvent(timeout: 10) {
                if case .linked = e { links += 1 } else if e == .pong(UInt64(round)) { break } else { return XCTFail("unexpected \(e)") }
            }
            // What did not link is forgotten with the connection's share: a leaves its codes waiting.
            while a.nextEvent(timeout: 0) != nil {}
        }
        let elapsed = monotonicSeconds() - started
        let linked = try memory()
        print("figure: link churn, 7,168 links asked for by one pair of mailboxes in \(ms(elapsed)) ms: \(links) made (burst 2,048, then 8/s); relay RSS +\(linked - before) KiB (\((linked - before) * 1024 / max(links, 1)) B a link)")
        XCTAssertGreaterThanOrEqual(links, 2_048)
        XCTAssertLessThanOrEqual(Double(links), 2_048 + 8 * elapsed + 1)
        XCTAssertEqual(logCount("codes ignored: a mailbox made links faster"), 1, relay.stderr)
        // Other mailboxes link as ever.
        try assertRelayServes(address)
        a.close(); b.close()
        try assertMemorySettles(before, "link churn")
    }

    /// At its bound of links a connection drops those whose peer left (a send on one is then
    /// refused as an unknown link), and makes no link beyond it while all are live.
    func testLinksPerConnectionAreBoundedAndDeadOnesMakeRoom() throws {
        let address = try start(["--max-links-per-connection", "4"])
        let hub = try RelayClient.connect(to: address, mailboxKey: .generate())
        let first = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { hub.close(); first.close() }
        for c in [hub, first] { XCTAssertEqual(c.nextEvent(timeout: 5), .drained) }
        let codes = (0..<5).map { _ in Random.bytes(32) }
        try hub.present(codes)
        try hub.eventsUntilPong()
        try first.present(codes)
        try first.eventsUntilPong()
        let links = try hub.eventsUntilPong().compactMap { e -> LinkID? in
            if case .linked(let id, _) = e { return id } else { return nil }
        }
        XCTAssertEqual(links.count, 4, "the fifth is beyond the bound")
        XCTAssertEqual(logCount("codes ignored: a mailbox made links faster than the relay allows, or a connection has its bound of links"), 1, relay.stderr)
        first.close()
        var gone = 0
        while gone < 4, let e = hub.nextEvent(timeout: 5) { if case .peerGone = e { gone += 1 } }
        XCTAssertEqual(gone, 4)
        // A sixth code with a new peer: the four dead links make room.
        let second = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { second.close() }
        let code = Random.bytes(32)
        try hub.present([code])
        try hub.eventsUntilPong()
        try second.present([code])
        guard case .linked(let fresh, _)? = hub.nextEvent(timeout: 5) else { return XCTFail("no room made") }
        let onDead = try hub.send(on: links[0], [1])
        XCTAssertEqual(hub.nextEvent(timeout: 5), .refused(seq: onDead, reason: .unknownLink))
        let onFresh = try hub.send(on: fresh, [2])
        XCTAssertEqual(hub.nextEvent(timeout: 5), .sent(seq: onFresh, forwarded: true))
    }

    // MARK: message requests

    /// Strangers' requests have their own quota: a flood of them never makes a friend's
    /// message refused; and what one mailbox is sent is bounded in rate too.
    func testRequestFloodNeverRefusesAFriendsMessage() throws {
        let address = try start(["--quota", "20", "--request-quota", "10"])
        let before = try memory()
        let victimKey = SigningKey.generate()
        let pair = try link(address, keyA: victimKey)
        let token = try pair.a.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
        pair.a.close()
        XCTAssertEqual(pair.b.nextEvent(timeout: 5), .peerGone(link: pair.link))
        let stranger = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { stranger.close(); pair.b.close() }
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        let flood = try (0..<500).map { _ in try stranger.sendRequest(to: token, Random.bytes(1024), flush: false) }
        try stranger.flush()
        var accepted = 0, refusedForQuota = 0
        for _ in flood {
            switch stranger.nextEvent(timeout: 5) {
            case .sent?: accepted += 1
            case .refused(_, .requestQuotaExceeded)?: refusedForQuota += 1
            case let other: return XCTFail("unexpected \(String(describing: other))")
            }
        }
        XCTAssertEqual(accepted, 10)
        XCTAssertEqual(refusedForQuota, 490)
        // The friend's 20 messages (the conversation quota) are all held.
        for i in 0..<20 {
            let seq = try pair.b.send(on: pair.link, [UInt8(i)])
            XCTAssertEqual(pair.b.nextEvent(timeout: 5), .sent(seq: seq, forwarded: false), "message \(i)")
        }
        // The victim takes everything; the stranger's budget (10 an hour here) is spent.
        let victim = try RelayClient.connect(to: address, mailboxKey: victimKey)
        defer { victim.close() }
        let all = victim.expectDeliveries(30)
        XCTAssertEqual(all.filter { if case .invite = $0.origin { return true } else { return false } }.count, 10)
        try victim.acknowledge(all.map(\.id))
        let seq = try stranger.sendRequest(to: token, [1])
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .refused(seq: seq, reason: .requestQuotaExceeded),
                       "nothing held, but the rate is spent")
        print("figure: request flood of 500 × 1 KiB to one mailbox, --request-quota 10: 10 held, 490 refused; 20 of 20 friend's messages held")
        try assertMemorySettles(before, "a request flood")
    }

    /// Requests held for a mailbox that moves (after `keys rotate`) still count against the
    /// request quota of the new one, not against its conversations'.
    func testMovedRequestsStayRequests() throws {
        let address = try start(["--request-quota", "2"])
        let oldKey = SigningKey.generate()
        let old = try RelayClient.connect(to: address, mailboxKey: oldKey)
        let oldToken = try old.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
        try old.eventsUntilPong()
        old.close()
        let stranger = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { stranger.close() }
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .drained)
        for n in 0..<2 {
            let seq = try stranger.sendRequest(to: oldToken, [UInt8(n)])
            XCTAssertEqual(stranger.nextEvent(timeout: 5), .sent(seq: seq, forwarded: false))
        }
        let moved = try RelayClient.connect(to: address, mailboxKey: .generate())
        defer { moved.close() }
        let newToken = try moved.registerInvites(salts: [Random.bytes(InviteToken.saltBytes)])[0]
        try moved.moveMailbox(from: oldKey)
        XCTAssertEqual(moved.expectDeliveries(2).map(\.origin), [.invite(oldToken), .invite(oldToken)])
        let over = try stranger.sendRequest(to: newToken, [9])
        XCTAssertEqual(stranger.nextEvent(timeout: 5), .refused(seq: over, reason: .requestQuotaExceeded))
    }

    // MARK: configuration

    func testTheNewLimitsParseAndTheDefaultsLeaveRoomForRealClients() throws {
        let c = try RelayConfiguration.parse(["--listen", "127.0.0.1:0", "--max-connections-per-address", "3", "--idle-timeout", "9",
                                              "--request-quota", "5", "--max-output-bytes", "70000",
                                              "--max-codes-per-connection", "7", "--max-codes-per-mailbox", "8"], environment: [:])
        XCTAssertEqual(c.maxConnectionsPerAddress, 3)
        XCTAssertEqual(c.idleTimeout, 9)
        XCTAssertEqual(c.requestQuota, 5)
        XCTAssertEqual(c.maxOutputBytes, 70_000)
        XCTAssertEqual(c.maxPendingCodesPerConnection, 7)
        XCTAssertEqual(c.maxPendingCodesPerMailbox, 8)
        for bad in [["--max-connections-per-address", "0"], ["--idle-timeout", "-1"], ["--request-quota", "x"],
                    ["--max-output-bytes", "1000"], ["--max-codes-per-connection", "0"]] {
            XCTAssertThrowsError(try RelayConfiguration.parse(["--listen", "127.0.0.1:0"] + bad, environment: [:]), "\(bad)")
        }
        let defaults = RelayConfiguration(keyFile: "unused")
        // An engine pings every 60 s: five pings fit in the idle timeout.
        XCTAssertGreaterThanOrEqual(defaults.idleTimeout, 5 * RelayProtocol.keepaliveSeconds)
        // An engine presents 7 codes per contact: a client with 146 contacts here fits.
        XCTAssertGreaterThanOrEqual(defaults.maxPendingCodesPerConnection, 7 * 146)
        XCTAssertGreaterThanOrEqual(defaults.maxPendingCodesPerMailbox, defaults.maxPendingCodesPerConnection)
    }

    // MARK: memory

    private func memory(field: String = "VmRSS") throws -> Int {
        let pid = try XCTUnwrap(relay.pid)
        return try XCTUnwrap(residentKiB(pid: pid, field: field), "no \(field) for pid \(pid)")
    }

    /// Polls until the relay's RSS is back within 4 MiB of `before`, or fails.
    private func assertMemorySettles(_ before: Int, _ abuse: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let bound = 4 << 10
        var last = 0
        let after = waitFor(timeout: 10, interval: 0.1) { () -> Int? in
            last = (try? memory()) ?? Int.max
            return last <= before + bound ? last : nil
        }
        print("figure: RSS around \(abuse): \(before) KiB before, \(after ?? last) KiB after (\((after ?? last) - before) KiB)")
        XCTAssertNotNil(after, "RSS after \(abuse): \(last) KiB, more than 4 MiB over \(before) KiB", file: file, line: line)
    }

    private func ms(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }
}

/// A field of /proc/PID/status in KiB (VmRSS now, VmHWM the peak), nil if unreadable.
func residentKiB(pid: Int32, field: String = "VmRSS") -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
    }
    return nil
}

extension RawClient {
    /// Connected, through the handshake, with a fresh key proved; throws when refused.
    static func authenticated(_ address: RelayAddress) throws -> RawClient {
        let raw = try RawClient(address)
        try raw.handshake(relayKey: address.publicKey)
        try raw.authenticate(.generate())
        guard case .welcome? = try raw.readMessage() else { throw RelayClientError.protocolViolation("no welcome") }
        return raw
    }
}

/// Tells a helper thread to stop.
/// Stops a thread that paces a load (a byte, a ping every so often): the pace is a wait for
/// the stop with a deadline, so the thread ends as soon as it is told.
final class StopFlag: Sendable {
    private let signal = DispatchSemaphore(value: 0)
    let done = Atomic<Bool>(false)

    func stop() { signal.signal() }

    /// Waits up to `seconds` for `stop()`; true once it came.
    func stopped(within seconds: Double) -> Bool {
        guard signal.wait(timeout: .now() + seconds) == .success else { return false }
        signal.signal()  // stays stopped for later calls
        return true
    }
}

extension RelayClient {
    /// Pings and returns the events that came before the pong: by then the relay has
    /// handled everything this client sent before the ping.
    @discardableResult
    func eventsUntilPong(timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line) throws -> [RelayEvent] {
        let value = UInt64.random(in: 1...UInt64.max)
        try ping(value)
        var events: [RelayEvent] = []
        let deadline = Date(timeIntervalSinceNow: timeout)
        while let e = nextEvent(timeout: deadline.timeIntervalSinceNow) {
            if e == .pong(value) { return events }
            events.append(e)
        }
        XCTFail("no pong within \(timeout) s", file: file, line: line)
        return events
    }
}

/// Issue 27, finding 13: a client that does not pad leaks its frames' lengths to the network.
/// The relay refuses a sealed client frame that is not one of the wire sizes — properly
/// sealed, authenticated and in order — before it acts on it, and serves the others.
final class UnpaddedFrameTests: XCTestCase {
    var relay: RelayProcess!

    override func tearDown() { relay?.stop(signal: SIGKILL); relay = nil }

    /// Reads what the relay sends until the pong for `n` (other messages come after
    /// authentication first); false when none came.
    private func pong(_ n: UInt64, on client: RawClient) throws -> Bool {
        for _ in 0..<20 {
            guard let message = try client.readMessage() else { return false }
            if case .pong(n) = message { return true }
        }
        return false
    }

    func testAFrameNotPaddedToAWireSizeIsRefused() throws {
        relay = RelayProcess()
        let address = try relay.start([])
        // Padded (as every rChat client seals): served.
        let padded = try RawClient(address)
        try padded.handshake(relayKey: address.publicKey)
        try padded.authenticate(.generate())
        _ = try padded.writeSealed(.ping(7))
        XCTAssertTrue(try pong(7, on: padded), "a padded ping is answered")

        // The same ping sealed with its trailer only: 4 + 9 + 4 + 16 bytes on the wire.
        let bare = try RawClient(address)
        try bare.handshake(relayKey: address.publicKey)
        try bare.authenticate(.generate())
        let frame = FrameCodec.encode(bare.cipher!.seal(ClientMessage.ping(8).encoded(), fill: .trailerOnly))
        XCTAssertFalse(Padding.wireSizes.contains(frame.count), "\(frame.count) bytes")
        try bare.write(frame)
        XCTAssertEqual(bare.expectClosed(), .malformed)
        XCTAssertTrue(relay.stderr.contains("not one of the padded sizes"), relay.stderr)
        // The relay and its other clients carry on.
        _ = try padded.writeSealed(.ping(9))
        XCTAssertTrue(try pong(9, on: padded), "the padded client is still served")
    }
}
