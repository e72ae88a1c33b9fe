import Foundation

/// Where a relay listens and the static key it proves: `HOST:PORT/KEY`, KEY being the
/// relay's 32-byte public key in base64url. IPv6 hosts are written in brackets.
public struct RelayAddress: Hashable, Sendable, CustomStringConvertible {
    public let host: String
    public let port: UInt16
    public let publicKey: [UInt8]

    /// The key's bytes in one go (the synthesized hash took them one at a time, and the
    /// engine looks a relay up for every frame it receives). Equality stays synthesized.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
        publicKey.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case missingKey, badKey, missingPort, badPort, badHost

        public var description: String {
            switch self {
            case .missingKey: return "relay address has no key (expected HOST:PORT/KEY)"
            case .badKey: return "relay address key is not a 32-byte base64url key"
            case .missingPort: return "relay address has no port (expected HOST:PORT/KEY)"
            case .badPort: return "relay address port is not a number from 1 to 65535"
            case .badHost: return "relay address host is empty or malformed"
            }
        }
    }

    public init(host: String, port: UInt16, publicKey: [UInt8]) {
        self.host = host
        self.port = port
        self.publicKey = publicKey
    }

    public init(parsing text: String) throws(ParseError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let slash = trimmed.lastIndex(of: "/") else { throw .missingKey }
        let keyText = String(trimmed[trimmed.index(after: slash)...])
        guard let key = Base64URL.decode(keyText), key.count == 32 else { throw .badKey }
        let hostPort = trimmed[..<slash]
        guard let colon = hostPort.lastIndex(of: ":") else { throw .missingPort }
        guard let port = UInt16(hostPort[hostPort.index(after: colon)...]), port > 0 else { throw .badPort }
        var host = String(hostPort[..<colon])
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { throw .badHost }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            throw .badHost
        }
        guard !host.isEmpty, host.allSatisfy({ !$0.isWhitespace && $0 != "/" }) else { throw .badHost }
        self.init(host: host, port: port, publicKey: key)
    }

    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(h):\(port)/\(Base64URL.encode(publicKey))"
    }
}
