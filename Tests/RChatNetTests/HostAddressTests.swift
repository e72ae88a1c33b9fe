import RChatNet
import XCTest

/// How a relay counts hosts: an IPv4 address whole, an IPv6 address by its /64.
final class HostAddressTests: XCTestCase {
    private func host(_ bytes: [UInt8]) -> HostAddress { bytes.withUnsafeBytes { HostAddress(bytes: $0) } }
    private let v4Prefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    func testIPv4IsCountedWhole() {
        let a = host(v4Prefix + [127, 0, 0, 1]), b = host(v4Prefix + [127, 0, 0, 2])
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(a, host(v4Prefix + [127, 0, 0, 1]))
        XCTAssertEqual(a.description, "127.0.0.1")
    }

    func testIPv6IsCountedByItsSlash64() {
        let prefix: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2]
        let a = host(prefix + [0, 0, 0, 0, 0, 0, 0, 1]), b = host(prefix + [0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4])
        XCTAssertEqual(a, b, "one machine picks addresses from its /64")
        XCTAssertNotEqual(a, host([0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 3] + [0, 0, 0, 0, 0, 0, 0, 1]))
        XCTAssertEqual(a.description, "2001:db8:1:2::/64")
    }
}
