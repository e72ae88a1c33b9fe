import Foundation
import RChatCommandLine
import RChatCore
import RChatCrypto
import RChatNet
import RChatRelayClient
import RChatWire

/// `rchat-bench relay`: the relay beside mosquitto 2.0 QoS 1 on loopback, with payloads of the
/// smallest padded size (what a short message, a receipt or a dummy is: 256 B on the wire).
struct RelayBenchmark {
    static let frames = Declared.integer("--frames", in: 1...10_000_000, default: 100_000, help: "frames forwarded online")
    static let paced = Declared.integer("--paced", in: 1...10_000_000, default: 30_000, help: "frames sent at 10k msg/s for latency")
    static let held = Declared.integer("--held", in: 1...10_000_000, default: 100_000, help: "frames held, then drained")
    static let command = BenchmarkCommand(name: "relay", options: [frames.option, paced.option, held.option])

    let frames: Int
    let paced: Int
    let held: Int
    static let payloadBytes = Padding.payloadSizes[0]
    static let window = 100

    init(arguments: [String]) {
        let options = Self.command.parse(arguments)
        frames = options[Self.frames]
        paced = options[Self.paced]
        held = options[Self.held]
    }

    func run() {
        NetSetup.ignoreBrokenPipes()
        let relayBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("rchat-relay").path
        let directory = NSTemporaryDirectory() + "rchat-bench-relay-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard let relay = try? Child(relayBinary, ["--listen", "127.0.0.1:0", "--key-file", directory + "/relay.key",
                                                  "--quota", String(held + 1000), "--max-held-bytes", String(1 << 34), "--quota-bytes", String(1 << 40)]),
              let line = relay.line(startingWith: "relay "), let address = try? RelayAddress(parsing: String(line.dropFirst(6))) else {
            print("error: cannot start \(relayBinary)")
            exit(1)
        }
        defer { relay.stop() }
        let mq = MosquittoReference.start()
        defer { mq?.stop() }

        print("rchat-bench relay: \(Self.payloadBytes)-byte payloads (\(Padding.wireSizes[0])-byte frames) on loopback, window \(Self.window); reference mosquitto 2.0 QoS 1 (mq_bench.c), same run")
        let ours = Self.online(from: address, to: address, frames: frames, rate: 0)
        let theirs = mq?.online(frames: frames, rate: 0)
        report("online forward throughput (msg/s)", ours.rate, theirs?.rate, higherIsBetter: true, target: "≥ 1.5×")

        let oursPaced = Self.online(from: address, to: address, frames: paced, rate: 10_000)
        let theirsPaced = mq?.online(frames: paced, rate: 10_000)
        report("latency p50 at 10k msg/s (µs)", oursPaced.p50, theirsPaced?.p50, higherIsBetter: false, target: "")
        report("latency p99 at 10k msg/s (µs)", oursPaced.p99, theirsPaced?.p99, higherIsBetter: false, target: "p99 ≤ 1×")

        let drain = Self.offlineDrain(from: address, to: address, frames: held, watching: [relay.pid], samples: 1)
        let theirsDrain = mq?.drain(frames: held)
        report("offline drain of \(held) held (msg/s)", drain.rate, theirsDrain?.rate, higherIsBetter: true, target: "≥ 1.25×")
        report("relay RSS per held \(Self.payloadBytes) B payload (B)", drain.bytesPerHeld(0), theirsDrain?.bytesPerHeld, higherIsBetter: false, target: "≤ 320 B")
    }

    private func report(_ name: String, _ ours: Double, _ theirs: Double?, higherIsBetter: Bool, target: String) {
        let pad = name.padding(toLength: 42, withPad: " ", startingAt: 0)
        guard let theirs, theirs > 0 else {
            print("\(pad) rchat \(format(ours))   (no reference)   target \(target)")
            return
        }
        let ratio = higherIsBetter ? ours / theirs : theirs / ours
        print("\(pad) rchat \(format(ours))   mosquitto \(format(theirs))   ratio \(String(format: "%.2f", ratio))× \(higherIsBetter ? "(higher is better)" : "(mosquitto ÷ rchat)")   target \(target)")
    }

    private func format(_ v: Double) -> String { v >= 1000 ? String(format: "%.0f", v) : String(format: "%.1f", v) }

    /// A linked pair, A at `sender` and B at `receiver` (one relay, or two nodes of a
    /// cluster); B's deliveries are counted (and timed) on its reader thread. Latencies in µs.
    static func online(from sender: RelayAddress, to receiverAddress: RelayAddress, frames: Int, rate: Int) -> (rate: Double, p50: Double, p99: Double) {
        let receiver = Receiver(expected: frames)
        let keyA = SigningKey.generate(), keyB = SigningKey.generate()
        guard let a = try? RelayClient.connect(to: sender, mailboxKey: keyA),
              let b = try? RelayClient.connect(to: receiverAddress, mailboxKey: keyB, eventHandler: { receiver.handle($0) }) else { return (0, 0, 0) }
        receiver.client = b
        defer { a.close(); b.close() }
        let code = Random.bytes(32)
        try? a.present([code]); try? b.present([code])
        var link: LinkID = 0
        while let e = a.nextEvent(timeout: 5) { if case .linked(let l, _) = e { link = l; break } }
        guard receiver.waitLinked() else { return (0, 0, 0) }
        let drainer = Thread { while let e = a.nextEvent(timeout: 30), e != .closed(nil) { _ = e } }
        drainer.start()

        var payload = [UInt8](repeating: 0x5A, count: Self.payloadBytes)
        let start = monotonicNanoseconds()
        var sent = 0
        while sent < frames {
            if rate > 0 {
                let due = start + UInt64(Double(sent) / Double(rate) * 1e9)
                let now = monotonicNanoseconds()
                if due > now { usleep(useconds_t((due - now) / 1000)) }
            }
            guard a.waitForOutstandingSends(atMost: Self.window - 1, timeout: 30) else { break }
            // Fill the window, then one write for the batch.
            let room = rate > 0 ? 1 : min(frames - sent, Self.window - a.outstandingSends)
            for _ in 0..<max(room, 1) {
                stamp(&payload, seq: sent)
                _ = try? a.send(on: link, payload, flush: false)
                sent += 1
            }
            try? a.flush()
        }
        guard receiver.waitDone(timeout: 60) else { return (0, 0, 0) }
        let seconds = Double(receiver.lastNanos - start) / 1e9
        let lat = receiver.latenciesMicroseconds.sorted()
        return (Double(receiver.count) / seconds, percentile(lat, 0.5), percentile(lat, 0.99))
    }

    /// What `offlineDrain` measured: the handover's rate, and the resident memory of each
    /// watched process before the first frame was held and after each `frames / samples`.
    struct Drain {
        var rate = 0.0
        /// (frames held, VmRSS of each watched process in bytes), the first at 0 held.
        var resident: [(held: Int, bytes: [Int])] = []

        /// Resident bytes the `index`th watched process grew per held frame, first to last sample.
        func bytesPerHeld(_ index: Int) -> Double {
            guard let first = resident.first, let last = resident.last, last.held > first.held else { return 0 }
            return Double(last.bytes[index] - first.bytes[index]) / Double(last.held - first.held)
        }
    }

    /// Holds `frames` for an offline mailbox (A sends at `sender`), sampling the RSS of
    /// `pids` as they grow, then times the handover to B coming back at `receiver`.
    static func offlineDrain(from sender: RelayAddress, to receiverAddress: RelayAddress, frames: Int, watching pids: [Int32], samples: Int) -> Drain {
        let keyA = SigningKey.generate(), keyB = SigningKey.generate()
        var result = Drain()
        guard let a = try? RelayClient.connect(to: sender, mailboxKey: keyA),
              let b = try? RelayClient.connect(to: receiverAddress, mailboxKey: keyB) else { return result }
        let code = Random.bytes(32)
        try? a.present([code]); try? b.present([code])
        var link: LinkID = 0
        while let e = a.nextEvent(timeout: 5) { if case .linked(let l, _) = e { link = l; break } }
        b.close()
        while let e = a.nextEvent(timeout: 5) { if case .peerGone = e { break } }
        let drainer = Thread { while let e = a.nextEvent(timeout: 30), e != .closed(nil) { _ = e } }
        drainer.start()
        usleep(200_000)
        result.resident.append((0, pids.map(residentBytes)))
        var payload = [UInt8](repeating: 0x33, count: Self.payloadBytes)
        var sent = 0
        for sample in 1...max(samples, 1) {
            let until = frames * sample / max(samples, 1)
            while sent < until {
                guard a.waitForOutstandingSends(atMost: Self.window - 1, timeout: 30) else { break }
                for _ in 0..<min(until - sent, Self.window - a.outstandingSends) {
                    stamp(&payload, seq: sent)
                    _ = try? a.send(on: link, payload, flush: false)
                    sent += 1
                }
                try? a.flush()
            }
            _ = a.waitForOutstandingSends(atMost: 0, timeout: 30)
            result.resident.append((sent, pids.map(residentBytes)))
        }
        a.close()

        let receiver = Receiver(expected: frames)
        let start = monotonicNanoseconds()
        guard let b2 = try? RelayClient.connect(to: receiverAddress, mailboxKey: keyB, eventHandler: { receiver.handle($0) }) else { return result }
        receiver.client = b2
        defer { b2.close() }
        guard receiver.waitDone(timeout: 120) else { return result }
        result.rate = Double(receiver.count) / (Double(receiver.lastNanos - start) / 1e9)
        return result
    }

    private static func stamp(_ payload: inout [UInt8], seq: Int) {
        let ts = monotonicNanoseconds()
        for i in 0..<8 {
            payload[i] = UInt8(truncatingIfNeeded: UInt64(seq) >> UInt64(8 * i))
            payload[8 + i] = UInt8(truncatingIfNeeded: ts >> UInt64(8 * i))
        }
    }
}

/// Counts deliveries on the client's reader thread, acknowledges them in small batches,
/// and records end-to-end latency from the timestamp in each payload.
///
/// `@unchecked Sendable`: what the measuring thread reads is guarded by `lock`, an
/// `NSCondition` because it waits on it (`Mutex` has no wait); `pendingAcks` is the reader
/// thread's alone, and `client` is set before the connection delivers anything.
final class Receiver: @unchecked Sendable {
    let expected: Int
    weak var client: RelayClient?
    private let lock = NSCondition()
    private(set) var count = 0
    private(set) var lastNanos: UInt64 = 0
    private(set) var latenciesMicroseconds: [Double] = []
    private var linked = false
    private var pendingAcks: [HeldItemID] = []

    init(expected: Int) {
        self.expected = expected
        latenciesMicroseconds.reserveCapacity(expected)
    }

    func handle(_ event: RelayEvent) {
        switch event {
        case .linked:
            lock.lock(); linked = true; lock.broadcast(); lock.unlock()
        case .delivery(let d):
            let now = monotonicNanoseconds()
            var ts: UInt64 = 0
            for i in 0..<8 { ts |= UInt64(d.payload[8 + i]) << UInt64(8 * i) }
            pendingAcks.append(d.id)
            if pendingAcks.count >= 64 {
                try? client?.acknowledge(pendingAcks)
                pendingAcks.removeAll(keepingCapacity: true)
            }
            lock.lock()
            count += 1
            lastNanos = now
            latenciesMicroseconds.append(Double(now &- ts) / 1000)
            if count >= expected { lock.broadcast() }
            lock.unlock()
        default:
            break
        }
    }

    func waitLinked() -> Bool {
        let deadline = Date(timeIntervalSinceNow: 5)
        lock.lock(); defer { lock.unlock() }
        while !linked { if !lock.wait(until: deadline) { return false } }
        return true
    }

    func waitDone(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        lock.lock(); defer { lock.unlock() }
        while count < expected { if !lock.wait(until: deadline) { return false } }
        return true
    }
}
