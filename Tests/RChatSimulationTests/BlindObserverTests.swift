import XCTest
@testable import RChatSimulation
import RChatCore
import RChatCrypto

/// Issue 27, finding 4: a blind observer of the sizes and times of the frames clients send
/// their relay, on virtual time (`SimulatedWorld.watchTraffic`), steady traffic at normal.
final class BlindObserverTests: XCTestCase {
    func testReceiptsDoNotShowWhichFramesWereMessagesAndAFileIsPaced() throws {
        for seed: UInt64 in [1, 2, 3] {
            let record = SimulatedWorld.watchTraffic(seed: seed)
            XCTAssertEqual(record.failures, [], "seed \(seed)")
            guard record.failures.isEmpty else { continue }
            let small = Padding.wireSizes[0]
            let bobChat = record.times("bob", in: record.chat), bobIdle = record.times("bob", in: record.idle)
            let aliceChat = record.times("alice", in: record.chat, wireBytes: small)
            let aliceIdle = record.times("alice", in: record.idle, wireBytes: small)
            let bob = bobChat + bobIdle

            // The attack: Bob's frame 0.1–0.5 s after each of Alice's. Her real messages are
            // followed no more often than any frame of hers (the chance that one of Bob's slot
            // ends, cover frames or pings falls in 0.4 s: about a third).
            let flagged = record.messagesAt.filter { BlindObserver.followed($0, by: bob) }.count
            let chatShare = BlindObserver.followedShare(aliceChat, by: bob)
            let idleShare = BlindObserver.followedShare(aliceIdle, by: bob)
            print("figure: seed \(seed): \(flagged) of \(record.messagesAt.count) messages followed by a frame of the peer 0.1–0.5 s later; "
                  + "share of all frames followed so: chat \(rounded(chatShare)), idle \(rounded(idleShare))")
            XCTAssertLessThanOrEqual(flagged, record.messagesAt.count * 2 / 3, "seed \(seed): the observer counts the messages")
            XCTAssertLessThan(abs(chatShare - idleShare), 0.15, "seed \(seed): the observer tells chatting from idle")

            // Bob's frames keep the same rhythm whether Alice writes or not. (Beyond 0.1 s:
            // acknowledgements of what the relay hands him follow it at once in both.)
            let chatGaps = BlindObserver.gaps(bobChat).filter { $0 > 0.1 }, idleGaps = BlindObserver.gaps(bobIdle).filter { $0 > 0.1 }
            let distance = BlindObserver.distance(chatGaps, idleGaps)
            print("figure: seed \(seed): Bob's frames \(bobChat.count) chatting, \(bobIdle.count) idle; gaps' distance \(rounded(distance))")
            XCTAssertLessThan(distance, 0.3, "seed \(seed): Bob's gaps differ between chatting and idle")

            // A file of 5 MB: every frame a wire size; its chunks one per (short) slot, never
            // a burst at the link's speed.
            XCTAssertTrue(record.frames.allSatisfy { !$0.toRelay || $0.at < record.file.at || Padding.wireSizes.contains($0.wireBytes) })
            let large = record.times("alice", in: record.file.at...record.file.delivered, wireBytes: Padding.wireSizes.last!)
            let chunks = FileStream.chunkCount(size: UInt64(record.file.bytes))
            XCTAssertGreaterThanOrEqual(large.count, chunks, "seed \(seed)")
            let gaps = BlindObserver.gaps(large)
            let closest = gaps.min() ?? 0
            let most = maxInOneSecond(large)
            print("figure: seed \(seed): a file of \(record.file.bytes) B (\(chunks) chunks of 64 KiB frames) taken by the relay in "
                  + "\(rounded(record.file.sent - record.file.at)) s, Delivered in \(rounded(record.file.delivered - record.file.at)) s; "
                  + "chunk frames at least \(rounded(closest)) s apart, at most \(most) in any second")
            XCTAssertGreaterThan(closest, 0.02, "seed \(seed): chunks in a burst")
            XCTAssertLessThanOrEqual(most, 40, "seed \(seed): chunks faster than their slots")
            XCTAssertLessThan(record.file.delivered - record.file.at, 30, "seed \(seed): a 5 MB file too slow")
        }
    }

    private func maxInOneSecond(_ times: [Double]) -> Int {
        var most = 0, start = 0
        for end in times.indices {
            while times[end] - times[start] >= 1 { start += 1 }
            most = max(most, end - start + 1)
        }
        return most
    }

    private func rounded(_ x: Double) -> String { String(format: "%.2f", x) }
}
