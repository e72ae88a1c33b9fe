import Foundation
import RChatCore
import RChatCrypto
import RChatEngine

/// A scripted run on virtual time (attachments are not among the random actions): Alice
/// sends Bob a file larger than the sender's window (128 chunks ahead of the receiver's
/// reports) while Bob's engine is killed mid-file. What must hold: with nothing else sent,
/// the relay takes the whole file within its quota, or the file says it waits for room
/// there; once Bob is back he has it whole, once, and Alice's message is Delivered.
extension SimulatedWorld {
    public static func uploadWhileAway(seed: UInt64, bytes: Int = 16 * 1024 * 1024) -> Outcome {
        scripted(seed: seed, "upload", { try $0.uploadWhileAway(bytes: bytes) }) { world in
            Outcome(seed: seed, steps: 0, failures: world.failures, digest: world.trace.digest, tail: world.trace.tail,
                    messages: world.invariants?.messageCount ?? 0, powerCuts: 0, powerCutsLosingData: 0)
        }
    }

    /// A scripted run of two accounts on `seed`, in a folder of its own removed after it:
    /// `body`'s error is the run's failure; `outcome` reads the world before it closes.
    static func scripted<T>(seed: UInt64, _ label: String, _ body: (SimulatedWorld) throws -> Void,
                            outcome: (SimulatedWorld) -> T) -> T {
        SeededRandomness.seed(seed)
        defer { SeededRandomness.unseed() }
        let directory = "\(scratchRoot)/rchat-sim-\(label)-\(seed)-\(getpid())-\(UUID().uuidString.prefix(8))"
        let world = SimulatedWorld(seed: seed, directory: directory, traceLines: 400)
        defer {
            world.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try world.setUp(accounts: 2)
            try body(world)
        } catch {
            world.failures.append("\(error)")
        }
        return outcome(world)
    }

    private func uploadWhileAway(bytes: Int) throws {
        let alice = accounts[0], bob = accounts[1]
        let warmUp = try alice.commands(clock).send(to: bob.name, content: .text("warm-up"))
        alice.engine?.wake()
        try runUntil("the warm-up is Delivered", seconds: 120) { try self.message(warmUp, in: alice, from: bob)?.status == .delivered }

        let path = "\(directory)/upload.bin"
        let data = Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        try data.write(to: URL(fileURLWithPath: path))
        let id = try alice.commands(clock).sendFile(to: bob.name, path: path, as: .file)
        trace.note("alice sent a file of \(bytes) bytes (\(id.hex))")
        alice.engine?.wake()
        try runUntil("Bob stores part of the file", seconds: 120, step: 0.002) {
            if case .moving(let done, _)? = try self.message(id, in: bob, from: alice)?.transfer { return done > 0 }
            return false
        }
        bob.crash(in: self)
        if case .moving(let done, _)? = try message(id, in: bob, from: alice)?.transfer,
           Int(done) >= bytes - FileStream.plainChunkBytes * Engine.fileWindow {
            throw SimulationError("Bob was killed too late in the file (\(done) bytes stored): the window covered the rest")
        }

        // Invariant: the relay takes it all, or says there is no room for the rest.
        try runUntil("the relay takes the file while Bob is away, or it waits for room", seconds: 600) {
            switch try self.message(id, in: alice, from: bob)?.transfer {
            case .complete?, .moving(_, .room?)?: return true
            default: return false
            }
        }
        trace.note("the relay took the file, or holds what its quota lets it, while Bob is away")
        try bob.start(in: self)
        try runUntil("the file is Delivered once Bob is back", seconds: 600) {
            try self.message(id, in: alice, from: bob)?.status == .delivered
        }
        let copies = try bob.commands(clock).conversation(alice.name).filter { if case .message(let m) = $0 { m.id == id } else { false } }
        guard copies.count == 1, case .message(let m) = copies[0], case .complete(let received)? = m.transfer,
              FileManager.default.contents(atPath: received) == data else {
            throw SimulationError("Bob does not have the file whole, once (\(copies.count) copies)")
        }
    }

    /// Message `id` of `account`'s conversation with `other`, as its commands read it.
    func message(_ id: MessageID, in account: SimulatedAccount, from other: SimulatedAccount) throws -> MessageItem? {
        for case .message(let m) in try account.commands(clock).conversation(other.name) where m.id == id { return m }
        return nil
    }

    /// Runs the world `step` virtual seconds at a time until `condition` holds; throws after `seconds`.
    func runUntil(_ what: String, seconds: Double, step: Double = 1, _ condition: () throws -> Bool) throws {
        let end = clock.seconds() + seconds
        while clock.seconds() < end {
            if try condition() { return }
            try runFor(step)
            if let failure = failures.first { throw SimulationError(failure) }
        }
        if try condition() { return }
        throw SimulationError("\(what): not within \(Int(seconds)) s of virtual time")
    }
}
