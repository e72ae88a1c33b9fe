import Foundation

/// The one line a person hands to a friend (docs/PROTOCOL.md, "Contact code"): who they are, the keys to pin, the
/// relay where they can be reached and an invite token for a first message.
///
/// Text form: `rchat-<version>-<base64url(payload)>`. The payload starts with its own
/// length (so a cut code says "truncated") and ends with a CRC-32 (so a mistyped one says
/// so). Payload, version 2 (strings are u16 length + UTF-8, integers big-endian):
///
///     length u16 ‖ name str ‖ account key 32 ‖ device key 32 ‖ device certificate 64 ‖
///     relay host str ‖ relay port u16 ‖ relay key 32 ‖ invite token 16 ‖ signature 64 ‖ crc32 u32
///
/// `signature` is the account key's Ed25519 signature over `signatureLabel ‖` every field
/// before it (`signedFields`), so nobody can swap in another relay or invite token and keep
/// the code genuine. Whether the keys and the signature are genuine is checked with the
/// account key (RChatCrypto's `ContactCode.verifySignature`), not here.
public struct ContactCode: Equatable, Sendable {
    public static let prefix = "rchat-"
    public static let currentVersion = 2
    public static let maxNameBytes = 64
    public static let signatureLabel = Array("rchat contact code v2".utf8)

    public var name: String
    public var accountKey: [UInt8]        // Ed25519 public key
    public var deviceKey: [UInt8]         // Ed25519 public key
    public var deviceCertificate: [UInt8] // account signature over the device key
    public var relay: RelayAddress
    public var inviteToken: [UInt8]
    /// The account key's signature over `signatureLabel ‖ signedFields`.
    public var signature: [UInt8]

    public init(name: String, accountKey: [UInt8], deviceKey: [UInt8], deviceCertificate: [UInt8],
                relay: RelayAddress, inviteToken: [UInt8], signature: [UInt8]) {
        self.name = name
        self.accountKey = accountKey
        self.deviceKey = deviceKey
        self.deviceCertificate = deviceCertificate
        self.relay = relay
        self.inviteToken = inviteToken
        self.signature = signature
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case notAContactCode
        case unsupportedVersion(String)
        case badCharacters
        case truncated
        case checksumMismatch
        case badField(String)
        /// A version 1 code: it carries no signature over its relay and invite token.
        case unsigned

        public var description: String {
            switch self {
            case .notAContactCode: return "not an rChat contact code (it should start with \"rchat-\(ContactCode.currentVersion)-\")"
            case .unsupportedVersion(let v): return "contact code version \(v) is not supported by this rChat (it reads version \(ContactCode.currentVersion))"
            case .unsigned: return "this contact code is from an older rChat and is not signed: ask for a new code (rchat code)"
            case .badCharacters: return "contact code contains characters that cannot be part of a code (mistyped?)"
            case .truncated: return "contact code is truncated: part of it is missing"
            case .checksumMismatch: return "contact code checksum does not match: it was mistyped or altered"
            case .badField(let f): return "contact code has an invalid \(f)"
            }
        }
    }

    /// What `validName` asks, as a user is told it.
    public static let nameRule = "name must be 1 to \(maxNameBytes) bytes, without control characters, direction marks, line breaks or surrounding spaces"

    public static func validName(_ name: String) -> Bool {
        let bytes = name.utf8.count
        return bytes >= 1 && bytes <= maxNameBytes
            && TerminalText.isSafe(name, breaks: .shown)  // no controls, no direction overrides, no line breaks
            && name.trimmingCharacters(in: .whitespaces) == name
    }

    /// Every field the signature covers, in their order on the wire.
    public var signedFields: [UInt8] {
        var body = ByteWriter(capacity: 256)
        body.string(name)
        body.raw(accountKey)
        body.raw(deviceKey)
        body.raw(deviceCertificate)
        body.string(relay.host)
        body.u16(relay.port)
        body.raw(relay.publicKey)
        body.raw(inviteToken)
        return body.bytes
    }

    public var text: String {
        var body = ByteWriter(capacity: 320)
        body.raw(signedFields)
        body.raw(signature)
        var whole = ByteWriter(capacity: body.bytes.count + 6)
        whole.u16(UInt16(body.bytes.count + 6))
        whole.raw(body.bytes)
        whole.u32(CRC32.checksum(whole.bytes))
        return "\(Self.prefix)\(Self.currentVersion)-\(Base64URL.encode(whole.bytes))"
    }

    /// Reads a code as pasted: whitespace anywhere in it (spaces, line breaks where a
    /// terminal or a mail broke a long line) is removed first; nothing else is forgiven.
    public init(parsing input: String) throws(ParseError) {
        let text = String(input.filter { !$0.isWhitespace })
        guard text.lowercased().hasPrefix(Self.prefix) else { throw .notAContactCode }
        let afterPrefix = text.dropFirst(Self.prefix.count)
        guard let dash = afterPrefix.firstIndex(of: "-") else {
            throw afterPrefix.isEmpty || afterPrefix.allSatisfy(\.isNumber) ? .truncated : .notAContactCode
        }
        let version = String(afterPrefix[..<dash])
        guard version == String(Self.currentVersion) else {
            if version == "1" { throw .unsigned }
            throw version.allSatisfy(\.isNumber) && !version.isEmpty ? .unsupportedVersion(version) : .notAContactCode
        }
        let encoded = String(afterPrefix[afterPrefix.index(after: dash)...])
        guard let bytes = Base64URL.decode(encoded) else {
            // A cut can leave an impossible base64 length; report it as what it is.
            let alphabetOnly = encoded.utf8.allSatisfy { Base64URL.isAlphabet($0) }
            throw alphabetOnly ? .truncated : .badCharacters
        }
        guard bytes.count >= 6 else { throw .truncated }
        let declared = Int(bytes[0]) << 8 | Int(bytes[1])
        if bytes.count < declared { throw .truncated }
        guard bytes.count == declared else { throw .checksumMismatch }
        let sum = bytes[(declared - 4)...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard CRC32.checksum(Array(bytes[..<(declared - 4)])) == sum else { throw .checksumMismatch }

        var r = ByteReader(Array(bytes[2..<(declared - 4)]))
        do {
            guard let name = try? r.string(), Self.validName(name) else { throw ParseError.badField("name") }
            self.name = name
            accountKey = try r.raw(32)
            deviceKey = try r.raw(32)
            deviceCertificate = try r.raw(64)
            guard let host = try? r.string(), !host.isEmpty else { throw ParseError.badField("relay host") }
            let port = try r.u16()
            guard port > 0 else { throw ParseError.badField("relay port") }
            relay = RelayAddress(host: host, port: port, publicKey: try r.raw(32))
            inviteToken = try r.raw(16)
            signature = try r.raw(64)
            guard r.isAtEnd else { throw ParseError.badField("length") }
        } catch let e as ParseError {
            throw e
        } catch {
            throw .badField("layout")
        }
    }
}

extension Base64URL {
    static func isAlphabet(_ c: UInt8) -> Bool {
        (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 45 || c == 95
    }
}
