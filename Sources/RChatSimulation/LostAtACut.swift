import Foundation
import RChatCore

extension SimulatedWorld {
    /// A scripted run that shows the power-cut invariant can fail: alice sends bob three
    /// messages; bob stores them, syncs and acknowledges them, and the relay drops them; then
    /// bob's power is cut and, when `losesSynced`, the cut also takes what was synced (the
    /// rows are deleted behind the store's back, as a disk that lied about its flushes would
    /// lose them). Nothing sends them again: the invariants must report it at the end.
    public static func powerCutAfterAcknowledging(seed: UInt64, losesSynced: Bool) -> Outcome {
        scripted(seed: seed, "lost-at-cut", { world in
            let alice = world.accounts[0], bob = world.accounts[1]
            try world.runFor(5)
            var ids: [MessageID] = []
            for n in 1...3 {
                let id = try alice.commands(world.clock).send(to: bob.name, content: .text("before the cut \(n)"))
                world.invariants.sent(id, from: alice, to: bob)
                ids.append(id)
            }
            alice.engine?.wake()
            try world.runFor(10)
            try world.invariants.check(after: "before the cut")
            let held = try world.invariants.messagesHeld(by: bob)
            _ = bob.powerCut(seed: world.random.next(), in: world)
            if losesSynced {
                let store = try bob.commands(world.clock).store
                for id in ids { try store.database.execute("DELETE FROM messages WHERE id = ?", [.blob(id.bytes)]) }
            }
            try world.invariants.powerCut(bob, held: held)
            try bob.start(in: world)
            try world.healAndFinish()
        }) { world in
            Outcome(seed: seed, steps: 0, failures: world.failures, digest: world.trace.digest, tail: world.trace.tail,
                    messages: world.invariants?.messageCount ?? 0, powerCuts: world.powerCuts,
                    powerCutsLosingData: world.powerCutsLosingData)
        }
    }
}
