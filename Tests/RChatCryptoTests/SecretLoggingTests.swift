import RChatCore
import Synchronization
import XCTest
@testable import RChatCrypto

/// Secrets never reach a log: key types keep their bytes in `SecretBytes`, whose text
/// (plain or reflected, as a careless `log("\(key)")` would write it) shows none of them.
final class SecretLoggingTests: XCTestCase {
    func testAKeyInterpolatedIntoALogLineShowsNoSecretByte() throws {
        let key = SigningKey.generate()
        let agreement = AgreementKey.generate()
        let logged = Mutex<[String]>([])
        let log = Logger(threshold: .debug) { line in logged.withLock { $0.append(line) } }
        log("key \(key)")
        log.debug("agreement \(String(reflecting: agreement))")
        log.error("secret \(key.secretKey) \(String(reflecting: agreement.secretKey))")
        let text = logged.withLock { $0.joined(separator: "\n") }
        XCTAssertEqual(logged.withLock { $0.count }, 3)
        for secret in [key.secretKey.exposedCopy().prefix(32), agreement.secretKey.exposedCopy()[...]] {
            let bytes = Array(secret)
            XCTAssertFalse(text.contains(Hex.encode(bytes)), text)
            // The first eight bytes as an array prints them: "[12, 200, …".
            XCTAssertFalse(text.contains(bytes.prefix(8).map(String.init).joined(separator: ", ")), text)
        }
        // What it does show: that a secret is there, and the public half.
        XCTAssertTrue(text.contains("SecretBytes"), text)
    }
}
