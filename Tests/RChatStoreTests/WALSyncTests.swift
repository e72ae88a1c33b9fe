import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// Group commit: a transaction committed without waiting for the disk, then synced on the
/// WAL sync thread, which reports each request once the WAL is durable.
final class WALSyncTests: StoreTestCase {
    private final class Reports: Sendable {
        private let reported = Locked<(numbers: [UInt64], failures: [StoreError])>(([], []))
        func add(_ r: Result<UInt64, StoreError>) {
            reported.withLock { switch r { case .success(let n): $0.numbers.append(n); case .failure(let e): $0.failures.append(e) } }
        }
        var numbers: [UInt64] { reported.withLock { $0.numbers } }
        var failures: [StoreError] { reported.withLock { $0.failures } }
        var last: UInt64 { numbers.last ?? 0 }
    }

    private func synchronous() throws -> Int64 {
        try XCTUnwrap(store.database.queryOne("PRAGMA synchronous")?.int64(at: 0))
    }

    func testACommitSyncedLaterIsStoredAndEveryOtherTransactionStillWaitsForTheDisk() throws {
        XCTAssertEqual(try synchronous(), 2, "FULL")
        let id = MessageID.random()
        try store.transactionSyncedLater { tx in _ = try tx.insertIncoming(contact: sam, id: id, content: .text("later"), at: 5) }
        XCTAssertEqual(try store.message(contact: sam, id: id)?.content, .text("later"))
        XCTAssertEqual(try synchronous(), 2, "FULL again after it")
        // Also when the transaction fails.
        XCTAssertThrowsError(try store.transactionSyncedLater { _ in throw StoreError.unknownContact(ContactID(99)) })
        XCTAssertEqual(try synchronous(), 2)
    }

    func testEachRequestIsReportedOnceTheWALIsSyncedAndRequestsQueuedTogetherAreAnsweredTogether() throws {
        let reports = Reports()
        let sync = WALSync(store: store) { reports.add($0) }
        defer { sync.stop() }
        XCTAssertEqual(sync.lastRequested, 0)
        var last: UInt64 = 0
        for i in 0..<20 {
            try store.transactionSyncedLater { tx in _ = try tx.insertIncoming(contact: sam, id: .random(), content: .text("m\(i)"), at: 5) }
            last = sync.request()
        }
        XCTAssertEqual(last, 20)
        XCTAssertEqual(sync.lastRequested, 20)
        let deadline = Date(timeIntervalSinceNow: 10)
        while reports.last < last && Date() < deadline { usleep(1_000) }
        XCTAssertEqual(reports.last, last, "the last request is reported")
        XCTAssertTrue(reports.failures.isEmpty)
        let numbers = reports.numbers
        XCTAssertEqual(numbers, numbers.sorted(), "in order")
        XCTAssertEqual(Set(numbers).count, numbers.count, "each number once")
        XCTAssertLessThanOrEqual(numbers.count, 20, "queued requests answered by one sync")
        XCTAssertNoThrow(try sync.syncNow())
    }

    func testWithoutAWALFileThereIsNothingToSync() throws {
        store.close()  // the last connection checkpoints and removes the WAL
        store = nil
        XCTAssertFalse(FileManager.default.fileExists(atPath: dbPath + "-wal"))
        let reopened = try Store(path: dbPath)
        defer { reopened.close() }
        try? FileManager.default.removeItem(atPath: dbPath + "-wal")
        let sync = WALSync(store: reopened) { _ in }
        XCTAssertNoThrow(try sync.syncNow())
        sync.stop()
    }
}
