@preconcurrency import CSodium
import RChatCore

/// An attachment's file, encrypted once under its own key with libsodium's secretstream
/// (XChaCha20-Poly1305) and cut into chunks that each fit a relay frame.
///
/// Layout of the encrypted file (and so of what travels):
///
///     24 bytes                 the stream header (sent in front of chunk 0)
///     chunk i, i = 0 … n-1     secretstream message of plaintext bytes
///                              [i·plainChunkBytes, min((i+1)·plainChunkBytes, size)),
///                              plaintext + 17 bytes (tag byte and MAC); the last one has the
///                              FINAL tag. An empty file is not sent (n ≥ 1).
///
/// Chunk i of the ciphertext starts at `header + i · (plainChunkBytes + 17)`. Encryption
/// and decryption run in order (the stream's state chains the chunks: none can be dropped,
/// reordered or repeated); a state can be saved (`stateBytes`, secret: 52 bytes) and taken
/// up again, so a sender re-creates any chunk from the state it started with and the
/// plaintext, and a receiver goes on after a restart from the state after its last chunk.
public enum FileStream {
    /// Plaintext bytes per chunk: a chunk with its envelope stays under a relay payload (64 KiB).
    public static let plainChunkBytes = 60 * 1024
    public static let headerBytes = Int(crypto_secretstream_xchacha20poly1305_headerbytes())
    public static let overheadBytes = Int(crypto_secretstream_xchacha20poly1305_abytes())
    public static let cipherChunkBytes = plainChunkBytes + overheadBytes
    public static let keyBytes = Int(crypto_secretstream_xchacha20poly1305_keybytes())

    /// How many chunks a file of `size` bytes has (at least one).
    public static func chunkCount(size: UInt64) -> Int {
        max(1, Int((size + UInt64(plainChunkBytes) - 1) / UInt64(plainChunkBytes)))
    }

    /// Plaintext bytes in chunk `index` of a file of `size` bytes.
    public static func plainBytes(ofChunk index: Int, size: UInt64) -> Int {
        let start = UInt64(index) * UInt64(plainChunkBytes)
        return Int(min(UInt64(plainChunkBytes), size - min(size, start)))
    }

    /// Where chunk `index` starts in the encrypted file.
    public static func cipherOffset(ofChunk index: Int) -> Int64 {
        Int64(headerBytes) + Int64(index) * Int64(cipherChunkBytes)
    }

    /// The size of the encrypted file for a plaintext of `size` bytes.
    public static func cipherSize(size: UInt64) -> Int64 {
        let n = chunkCount(size: size)
        return Int64(headerBytes) + Int64(n) * Int64(overheadBytes) + Int64(size)
    }

    public static func generateKey() -> SecretBytes {
        Sodium.ensureInitialized()
        return SecretBytes(count: keyBytes) { crypto_secretstream_xchacha20poly1305_keygen($0) }
    }

    /// Encrypts chunk after chunk; `header` goes first.
    public struct Encryptor: ~Copyable {
        private let state = StreamState()
        /// The stream header: empty for an encryptor taken up from saved state.
        public let header: [UInt8]

        public init(key: SecretBytes) {
            Sodium.ensureInitialized()
            precondition(key.count == FileStream.keyBytes)
            var header = [UInt8](repeating: 0, count: FileStream.headerBytes)
            let pointer = state.pointer
            key.withBytes { k in _ = crypto_secretstream_xchacha20poly1305_init_push(pointer, &header, k) }
            self.header = header
        }

        /// Goes on from a state saved with `stateBytes`; nil when the bytes are not one.
        public init?(stateBytes: [UInt8]) {
            guard state.load(stateBytes) else { return nil }
            header = []
        }

        /// The state as it is now: pushing from it again gives the same chunks.
        public var stateBytes: [UInt8] { state.bytes }

        public mutating func seal(_ plaintext: UnsafeRawBufferPointer, final: Bool) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: plaintext.count + FileStream.overheadBytes)
            let tag = UInt8(final ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message())
            _ = crypto_secretstream_xchacha20poly1305_push(state.pointer, &out, nil, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                                            UInt64(plaintext.count), nil, 0, tag)
            return out
        }
    }

    public enum OpenError: Error, Equatable, CustomStringConvertible {
        case badHeader
        /// Chunk `index` did not authenticate, came out of order, or the stream ended early or late.
        case chunk(index: Int)

        public var description: String {
            switch self {
            case .badHeader: return "the file's stream header is not valid"
            case .chunk(let i): return "chunk \(i) of the file does not decrypt"
            }
        }
    }

    /// Decrypts chunk after chunk, in order.
    public struct Decryptor: ~Copyable {
        private let state = StreamState()
        private var next = 0

        public init(key: SecretBytes, header: [UInt8]) throws(OpenError) {
            Sodium.ensureInitialized()
            guard key.count == FileStream.keyBytes, header.count == FileStream.headerBytes else { throw .badHeader }
            let pointer = state.pointer
            let ok = key.withBytes { k in crypto_secretstream_xchacha20poly1305_init_pull(pointer, header, k) }
            guard ok == 0 else { throw .badHeader }
        }

        /// Goes on from a state saved with `stateBytes`, at chunk `next`.
        public init?(stateBytes: [UInt8], next: Int) {
            guard state.load(stateBytes) else { return nil }
            self.next = next
        }

        /// The state after the last chunk opened.
        public var stateBytes: [UInt8] { state.bytes }

        /// The plaintext of the next chunk; `final` says it must be the last one.
        public mutating func open(_ ciphertext: UnsafeRawBufferPointer, final: Bool) throws(OpenError) -> [UInt8] {
            let index = next
            next += 1
            guard ciphertext.count >= FileStream.overheadBytes else { throw .chunk(index: index) }
            var out = [UInt8](repeating: 0, count: ciphertext.count - FileStream.overheadBytes)
            var tag: UInt8 = 0
            let ok = crypto_secretstream_xchacha20poly1305_pull(state.pointer, &out, nil, &tag,
                                                                 ciphertext.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                                                 UInt64(ciphertext.count), nil, 0)
            let isFinal = tag == UInt8(crypto_secretstream_xchacha20poly1305_tag_final())
            guard ok == 0, isFinal == final else { throw .chunk(index: index) }
            return out
        }
    }

    /// A secretstream state in memory of its own, wiped when released.
    final class StreamState {
        static let size = MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size
        let pointer = UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>.allocate(capacity: 1)
        init() { sodium_memzero(pointer, Self.size) }

        var bytes: [UInt8] { Array(UnsafeRawBufferPointer(start: pointer, count: Self.size)) }

        func load(_ bytes: [UInt8]) -> Bool {
            guard bytes.count == Self.size else { return false }
            bytes.withUnsafeBytes { UnsafeMutableRawPointer(pointer).copyMemory(from: $0.baseAddress!, byteCount: Self.size) }
            return true
        }
        deinit {
            sodium_memzero(pointer, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
            pointer.deallocate()
        }
    }
}

/// BLAKE2b over data that comes in pieces (a file read chunk by chunk).
public struct StreamingHash: ~Copyable {
    public static let outputBytes = 32
    /// libsodium's state is 64-byte aligned, which Swift imports as opaque: kept in an
    /// allocation of `crypto_generichash_statebytes()` with that alignment.
    private let state: UnsafeMutableRawPointer

    public init() {
        Sodium.ensureInitialized()
        state = .allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        _ = crypto_generichash_init(OpaquePointer(state), nil, 0, Self.outputBytes)
    }

    /// Goes on from `stateBytes` (BLAKE2b's state holds no pointers: its bytes are all of it).
    public init?(stateBytes: [UInt8]) {
        guard stateBytes.count == crypto_generichash_statebytes() else { return nil }
        Sodium.ensureInitialized()
        state = .allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        stateBytes.withUnsafeBytes { state.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    public var stateBytes: [UInt8] { Array(UnsafeRawBufferPointer(start: state, count: crypto_generichash_statebytes())) }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        _ = crypto_generichash_update(OpaquePointer(state), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public consuming func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.outputBytes)
        _ = crypto_generichash_final(OpaquePointer(state), &out, Self.outputBytes)
        return out
    }

    deinit {
        sodium_memzero(state, crypto_generichash_statebytes())
        state.deallocate()
    }
}
