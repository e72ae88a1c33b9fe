import Foundation
import RChatCore
import RChatCrypto
import RChatEngine

/// What a watcher of the network between clients and their relay sees (issue 27, finding 4):
/// sizes and times of frames, whose connection and which way — nothing inside them.
public struct TrafficRecord: Sendable {
    public struct Frame: Sendable {
        public let owner: String
        public let toRelay: Bool
        public let wireBytes: Int
        public let at: Double
    }

    public var frames: [Frame] = []
    /// Alice writes to Bob in the first window and nothing in the second, as long.
    public var chat: ClosedRange<Double> = 0...0
    public var idle: ClosedRange<Double> = 0...0
    /// When Alice's engine sent each of her messages in the chat window.
    public var messagesAt: [Double] = []
    /// A file Alice sent after the idle window: when, when the relay had all of it (Sent),
    /// when Bob had it whole (Delivered), and its size.
    public var file: (bytes: Int, at: Double, sent: Double, delivered: Double) = (0, 0, 0, 0)
    public var failures: [String] = []

    /// When frames of `owner` to the relay went, within `window`.
    public func times(_ owner: String, in window: ClosedRange<Double>, wireBytes: Int? = nil) -> [Double] {
        frames.filter { frame in
            frame.owner == owner && frame.toRelay && window.contains(frame.at) && (wireBytes.map { frame.wireBytes == $0 } ?? true)
        }.map(\.at)
    }
}

/// The observer of issue 27: a frame from the peer a few hundred milliseconds after one from
/// the writer is the peer's receipt of a real message. On today's code it told every chat
/// window from an idle one and counted the messages.
public enum BlindObserver {
    /// After a frame from one side, when the other's receipt came (a relay hop, a commit and
    /// the 200 ms receipt window): acknowledgements come sooner, within tens of milliseconds.
    public static let replyAfter: ClosedRange<Double> = 0.1...0.5

    /// Whether a frame of `replies` (sorted) came `replyAfter` after `t`.
    public static func followed(_ t: Double, by replies: [Double]) -> Bool {
        replies.contains { replyAfter.contains($0 - t) }
    }

    /// The share of `sends` followed by one of `replies`.
    public static func followedShare(_ sends: [Double], by replies: [Double]) -> Double {
        sends.isEmpty ? 0 : Double(sends.filter { followed($0, by: replies) }.count) / Double(sends.count)
    }

    /// The times between successive frames.
    public static func gaps(_ times: [Double]) -> [Double] {
        zip(times.dropFirst(), times).map { $0 - $1 }
    }

    /// The two-sample Kolmogorov–Smirnov distance: the largest difference between the two
    /// samples' distribution functions (0: alike, 1: apart).
    public static func distance(_ a: [Double], _ b: [Double]) -> Double {
        guard !a.isEmpty, !b.isEmpty else { return 1 }
        let a = a.sorted(), b = b.sorted()
        var i = 0, j = 0, most = 0.0
        while i < a.count && j < b.count {
            let x = min(a[i], b[j])
            while i < a.count && a[i] <= x { i += 1 }
            while j < b.count && b[j] <= x { j += 1 }
            most = max(most, abs(Double(i) / Double(a.count) - Double(j) / Double(b.count)))
        }
        return most
    }
}

extension SimulatedWorld {
    /// Alice and Bob (steady traffic at its default, normal) on the simulated relay, watched
    /// on the wire: a chat window of `messages` messages from Alice a few seconds apart, each
    /// read by Bob a moment later; an idle window as long; then a file of `fileBytes`.
    public static func watchTraffic(seed: UInt64, messages: Int = 12, fileBytes: Int = 5_000_000) -> TrafficRecord {
        var record = TrafficRecord()
        return scripted(seed: seed, "watch", { try $0.watchTraffic(&record, messages: messages, fileBytes: fileBytes) }) { world in
            record.failures = world.failures.map { $0 + "\n" + world.trace.tail.suffix(40).joined(separator: "\n") }
            return record
        }
    }

    private func watchTraffic(_ record: inout TrafficRecord, messages: Int, fileBytes: Int) throws {
        let alice = accounts[0], bob = accounts[1]
        let warmUp = try alice.commands(clock).send(to: bob.name, content: .text("warm-up"))
        alice.engine?.wake()
        try runUntil("the warm-up is Delivered", seconds: 120) { try self.message(warmUp, in: alice, from: bob)?.status == .delivered }
        try runFor(10)

        var frames: [TrafficRecord.Frame] = []
        network.watch = { frames.append(.init(owner: $0, toRelay: $1, wireBytes: $2, at: $3)) }
        defer { network.watch = nil }

        let chatStart = clock.seconds()
        var sent: [MessageID] = []
        for n in 1...messages {
            try runFor(random.uniform(4...8))
            record.messagesAt.append(clock.seconds())
            sent.append(try alice.commands(clock).send(to: bob.name, content: .text("message \(n)")))
            alice.engine?.wake()
            scheduler.after(random.uniform(1...3)) { [self] in
                _ = try? bob.commands(clock).markRead(alice.name)
                bob.engine?.wake()
            }
        }
        try runFor(8)
        record.chat = chatStart...clock.seconds()
        try runFor(record.chat.upperBound - record.chat.lowerBound)
        record.idle = record.chat.upperBound...clock.seconds()
        try runUntil("every message is Read", seconds: 30, step: 0.1) {
            try sent.allSatisfy { try self.message($0, in: alice, from: bob)?.status == .read }
        }

        let path = "\(directory)/file.bin"
        try Data((0..<fileBytes).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 11) }).write(to: URL(fileURLWithPath: path))
        let at = clock.seconds()
        let id = try alice.commands(clock).sendFile(to: bob.name, path: path, as: .file)
        alice.engine?.wake()
        try runUntil("the file is Sent", seconds: 600, step: 0.01) {
            guard let status = try self.message(id, in: alice, from: bob)?.status else { return false }
            return status != .sending
        }
        let taken = clock.seconds()
        try runUntil("the file is Delivered", seconds: 600, step: 0.01) { try self.message(id, in: alice, from: bob)?.status == .delivered }
        record.file = (fileBytes, at, taken, clock.seconds())
        record.frames = frames
    }
}
