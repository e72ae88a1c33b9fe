import Foundation
import RChatSQL
import RChatStore
@testable import RChatSimulation
import XCTest

/// The simulation's disk under SQLite (Sources/CSimDisk): what a power cut keeps.
final class SimulatedDiskTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        let made = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-simdisk-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        folder = URL(fileURLWithPath: made).resolvingSymlinksInPath().path
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func open(_ disk: SimulatedDisk, synchronous: String = "FULL") throws -> Database {
        let db = try Database(path: disk.prefix + "t.db")
        _ = try db.query("PRAGMA journal_mode = WAL")
        try db.execute("PRAGMA synchronous = \(synchronous)")
        try db.execute("CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY, pad BLOB)")
        return db
    }

    private func rows(_ db: Database) throws -> [Int] {
        try db.query("SELECT n FROM t ORDER BY n").map { try $0.int(at: 0) }
    }

    func testACommittedTransactionSurvivesAPowerCutAndNothingReachesTheRealDisk() throws {
        for seed in UInt64(1)...20 {
            let disk = SimulatedDisk(prefix: folder + "/c\(seed)-")
            let db = try open(disk)
            try db.transaction { for n in 1...50 { try db.execute("INSERT INTO t VALUES (?, randomblob(300))", [.integer(Int64(n))]) } }
            disk.powerCut(seed: seed)
            db.close()
            let again = try open(disk)
            XCTAssertEqual(try rows(again), Array(1...50), "seed \(seed)")
            again.close()
        }
        // The real files are what `Database` creates before SQLite opens its own: no byte of
        // the database reaches them (their length only says whether it is empty).
        let real = try FileManager.default.contentsOfDirectory(atPath: folder)
        XCTAssertFalse(real.contains { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }, "\(real)")
        for name in real {
            XCTAssertTrue(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)).allSatisfy { $0 == 0 }, name)
        }
    }

    /// The real file at a simulated database's name is empty exactly when the database is,
    /// as a real disk's would be, after writes and after power cuts that keep or drop them:
    /// `lstat` tells an empty database from one with pages, and the engine's check for an
    /// empty home (`AccountService.holdsNoDatabase`) needs no connection of its own.
    func testTheRealFileIsEmptyExactlyWhenTheDatabaseIs() throws {
        var seen: Set<Bool> = []
        for seed in UInt64(1)...20 {
            let disk = SimulatedDisk(prefix: folder + "/e\(seed)-")
            let path = disk.prefix + "t.db"
            let db = try Database(path: path)
            XCTAssertEqual(try realSize(path), 0)
            try db.execute("PRAGMA synchronous = OFF")
            _ = try db.query("PRAGMA journal_mode = WAL")
            try db.execute("CREATE TABLE t (n INTEGER PRIMARY KEY)")
            _ = try db.query("PRAGMA wal_checkpoint")
            XCTAssertGreaterThan(try realSize(path), 0, "seed \(seed): the database has pages")
            disk.powerCut(seed: seed)
            db.close()
            // A checkpoint torn by the cut may leave a file SQLite finds malformed: not empty.
            let pages = (try? Database(path: path, readOnly: true).queryOne("PRAGMA page_count"))?.flatMap { try? $0.int(at: 0) }
            let empty = pages == 0
            XCTAssertEqual(try realSize(path) == 0, empty, "seed \(seed): \(pages.map(String.init) ?? "malformed") pages")
            XCTAssertTrue(try Data(contentsOf: URL(fileURLWithPath: path)).allSatisfy { $0 == 0 })
            seen.insert(empty)
        }
        XCTAssertEqual(seen, [true, false], "power cuts both dropped the unsynced database and kept it")
    }

    private func realSize(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? -1
    }

    /// The simulation's account stores start from one made once (`useStoreTemplate`): the
    /// same schema, version and application id as the migrations give a new file, durable
    /// (a power cut right after keeps it), its real placeholder no longer empty.
    func testAStoreMadeFromTheTemplateIsWhatTheMigrationsMake() throws {
        func schema(_ path: String) throws -> [String] {
            let db = try Database(path: path)
            defer { db.close() }
            var rows = try db.query("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name").map { try $0.string(at: 0) }
            rows.append("version \(try db.userVersion)")
            rows.append("application \(try db.queryOne("PRAGMA application_id")?.int64(at: 0) ?? 0)")
            return rows
        }
        let reference = folder + "/reference.db"
        try Store(path: reference).close()
        let expected = try schema(reference)
        XCTAssertFalse(expected.contains("version 0"))

        SimulatedDisk.useStoreTemplate()
        let disk = SimulatedDisk(prefix: folder + "/t-")
        let home = disk.prefix + "home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let path = home + "/" + Store.fileName
        try Store(path: path).close()
        XCTAssertEqual(disk.syncs, 0, "nothing to write: the template is the store")
        XCTAssertEqual(try schema(path), expected)
        XCTAssertGreaterThan(try realSize(path), 0)
        XCTAssertTrue(try Data(contentsOf: URL(fileURLWithPath: path)).allSatisfy { $0 == 0 }, "no byte of it on the real disk")
        disk.powerCut(seed: 7)
        XCTAssertEqual(try schema(path), expected, "durable from the start")
    }

    func testAnUncommittedTransactionVanishes() throws {
        for seed in UInt64(1)...20 {
            let disk = SimulatedDisk(prefix: folder + "/u\(seed)-")
            let db = try open(disk)
            try db.execute("INSERT INTO t VALUES (1, NULL)")
            try db.execute("BEGIN IMMEDIATE")
            for n in 2...400 { try db.execute("INSERT INTO t VALUES (?, randomblob(500))", [.integer(Int64(n))]) }
            disk.powerCut(seed: seed)
            db.close()
            let again = try open(disk)
            XCTAssertEqual(try rows(again), [1], "seed \(seed)")
            again.close()
        }
    }

    /// Commits that were never synced: a power cut keeps none, all or some of their sectors,
    /// and SQLite's WAL checksums make what opens afterwards a consistent database holding
    /// every synced commit and a prefix of the others.
    func testATornLogNeverYieldsACorruptDatabase() throws {
        var kept: Set<Int> = []
        for seed in UInt64(1)...150 {
            let survivors = try tornRun(seed: seed, name: "w\(seed)-")
            XCTAssertEqual(Array(survivors.prefix(10)), Array(1...10), "seed \(seed): a synced commit was lost")
            XCTAssertEqual(survivors, Array(1...survivors.count), "seed \(seed): not a prefix of the commits")
            kept.insert(survivors.count)
        }
        XCTAssertTrue(kept.contains(10), "no cut dropped every unsynced commit: \(kept.sorted())")
        XCTAssertTrue(kept.contains(40), "no cut kept every unsynced commit: \(kept.sorted())")
        XCTAssertTrue(kept.contains { $0 > 10 && $0 < 40 }, "no cut tore the log part-way: \(kept.sorted())")
    }

    /// A checkpoint that truncates the WAL (`Store.truncateLog`) is not followed by a sync of
    /// it: a power cut keeps the truncate whole or not at all, as a file system keeps a
    /// file's length, and never tears the old log sector by sector — a torn old log would
    /// replay the older copies of pages the checkpoint had written over (group seeds 402
    /// and 517 found `rchat.db` malformed so). Every committed row survives, whole.
    func testAPowerCutJustAfterTheLogWasTruncatedKeepsEveryCommit() throws {
        for seed in UInt64(1)...60 {
            let disk = SimulatedDisk(prefix: folder + "/t\(seed)-")
            let db = try open(disk)
            // Forty commits that rewrite the same pages: the log holds many copies of each.
            for n in 1...40 {
                try db.execute("INSERT OR REPLACE INTO t VALUES (?, randomblob(900))", [.integer(Int64(n % 8))])
                try db.execute("INSERT INTO t VALUES (?, NULL)", [.integer(Int64(100 + n))])
            }
            _ = try db.query("PRAGMA wal_checkpoint(TRUNCATE)")
            if seed % 2 == 0 { try db.execute("INSERT INTO t VALUES (1000, NULL)") }
            disk.powerCut(seed: seed)
            db.close()
            let again = try open(disk)
            XCTAssertEqual(try again.queryOne("PRAGMA integrity_check")?.string(at: 0), "ok", "seed \(seed)")
            XCTAssertEqual(try rows(again), Array(0...7) + Array(101...140) + (seed % 2 == 0 ? [1000] : []), "seed \(seed)")
            again.close()
        }
    }

    func testTheSameSeedCutsTheSameWay() throws {
        for seed in UInt64(1)...30 {
            XCTAssertEqual(try tornRun(seed: seed, name: "a\(seed)-"), try tornRun(seed: seed, name: "b\(seed)-"), "seed \(seed)")
        }
    }

    /// Ten synced commits, thirty not, a power cut: the rows the database has afterwards.
    private func tornRun(seed: UInt64, name: String) throws -> [Int] {
        let disk = SimulatedDisk(prefix: folder + "/" + name)
        let db = try open(disk)
        for n in 1...10 { try db.execute("INSERT INTO t VALUES (?, zeroblob(700))", [.integer(Int64(n))]) }
        try db.execute("PRAGMA synchronous = OFF")
        for n in 11...40 { try db.execute("INSERT INTO t VALUES (?, zeroblob(700))", [.integer(Int64(n))]) }
        let unsynced = disk.powerCut(seed: seed)
        XCTAssertGreaterThan(unsynced, 30)
        db.close()
        let again = try open(disk)
        defer { again.close() }
        XCTAssertEqual(try again.queryOne("PRAGMA integrity_check")?.string(at: 0), "ok", "seed \(seed)")
        return try rows(again)
    }
}
