import Foundation
import XCTest
@testable import RChatStore

/// A test of a schema step: an empty home (0700) each test, the store's file in it, made
/// with the steps before and opened again with all of them.
class MigrationTestCase: XCTestCase {
    var home: URL!
    var path: String { home.appendingPathComponent(Store.fileName).path }

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    override func tearDown() { try? FileManager.default.removeItem(at: home) }
}
