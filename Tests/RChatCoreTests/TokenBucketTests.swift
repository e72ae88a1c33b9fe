import XCTest
@testable import RChatCore

final class TokenBucketTests: XCTestCase {
    func testBurstThenRefillAtTheRate() {
        var bucket = TokenBucket(capacity: 3, perSecond: 2, now: 100)
        XCTAssertEqual((0..<5).filter { _ in bucket.take(now: 100) }.count, 3, "the burst is the capacity")
        XCTAssertFalse(bucket.take(now: 100.4), "0.8 of a token after 0.4 s")
        XCTAssertTrue(bucket.take(now: 100.5), "one token after 0.5 s at 2/s")
        XCTAssertFalse(bucket.take(now: 100.5))
        XCTAssertEqual((0..<10).filter { _ in bucket.take(now: 1_000) }.count, 3, "never more than the capacity")
    }

    func testWhatPassesInAStretchIsBounded() {
        // Asking 64 times a second for 10 s (steps exact in binary): capacity + rate × time.
        var bucket = TokenBucket(capacity: 5, perSecond: 1, now: 0)
        var taken = 0
        for step in 0...640 where bucket.take(now: Double(step) / 64) { taken += 1 }
        XCTAssertEqual(taken, 5 + 10)
    }

    func testAClockThatGoesBackAddsNothing() {
        var bucket = TokenBucket(capacity: 1, perSecond: 1, now: 50)
        XCTAssertTrue(bucket.take(now: 50))
        XCTAssertFalse(bucket.take(now: 10))
        XCTAssertFalse(bucket.take(now: 50.5))
        XCTAssertTrue(bucket.take(now: 51))
    }

    func testFullnessAndRefund() {
        var bucket = TokenBucket(capacity: 2, perSecond: 0.5, now: 0)
        XCTAssertTrue(bucket.isFull(at: 0))
        XCTAssertTrue(bucket.take(now: 0))
        XCTAssertFalse(bucket.isFull(at: 1.9))
        XCTAssertTrue(bucket.isFull(at: 2))
        bucket.refund()
        XCTAssertTrue(bucket.isFull(at: 0), "a token given back")
        bucket.refund()
        XCTAssertEqual(bucket.tokens, 2, "never above the capacity")
    }
}
