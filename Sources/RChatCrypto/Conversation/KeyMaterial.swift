import RChatCore

// Helpers for building byte strings that hold key material. ByteWriter grows a
// copy-on-write array, which can leave stray copies of secrets behind when it reallocates;
// these write into one buffer of the exact size, which the caller wipes.

/// Writes into a buffer whose size was fixed up front: no reallocation, no stray copies.
struct FixedWriter {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var offset = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func u8(_ v: UInt8) { buffer[offset] = v; offset += 1 }
    mutating func u16(_ v: UInt16) { u8(UInt8(v >> 8)); u8(UInt8(v & 0xff)) }
    mutating func u32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { u8(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }
    mutating func u64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { u8(UInt8(truncatingIfNeeded: v >> UInt64(s))) } }
    mutating func raw(_ v: [UInt8]) { for b in v { u8(b) } }
    mutating func secret(_ s: SecretBytes) {
        s.withBytes { p in for i in 0..<s.count { u8(p[i]) } }
    }

    /// An array of exactly `count` bytes filled by `fill`, which must write all of them.
    static func build(count: Int, _ fill: (inout FixedWriter) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var w = FixedWriter(buffer)
            fill(&w)
            precondition(w.offset == count, "FixedWriter: wrote \(w.offset) of \(count) bytes")
            initialized = count
        }
    }
}

extension Hash {
    /// Like `deriveKey(from:context:_:)`, with one more input that is itself a secret
    /// (a Diffie–Hellman result): the message holding it is wiped after hashing.
    static func deriveKey(from key: SecretBytes, context: String, secret: SecretBytes, _ parts: [UInt8]...) -> SecretBytes {
        let label = Array(context.utf8)
        let count = 4 + label.count + 4 + secret.count + parts.reduce(0) { $0 + 4 + $1.count }
        var message = FixedWriter.build(count: count) { w in
            w.u32(UInt32(label.count)); w.raw(label)
            w.u32(UInt32(secret.count)); w.secret(secret)
            for p in parts { w.u32(UInt32(p.count)); w.raw(p) }
        }
        defer { wipe(&message) }
        var derived = blake2b(message, key: key, outputBytes: 32)
        return SecretBytes(consuming: &derived)
    }
}

extension ByteReader {
    /// `count` bytes straight into a secret; the temporary array is wiped.
    mutating func secret(_ count: Int) throws -> SecretBytes {
        var bytes = try raw(count)
        return SecretBytes(consuming: &bytes)
    }
}

/// Lexicographic byte order: the one rule both sides use to decide roles and ownership.
func bytesPrecede(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.lexicographicallyPrecedes(b)
}
