import Foundation
import Glibc
@testable import RChatCrypto

/// Searches a process's writable memory (`/proc/PID/maps`, `/proc/PID/mem`) for a secret
/// without the searcher holding it: the secret is kept only XORed with a random pad, and
/// each candidate place is compared byte by byte against `masked[i] ^ pad[i]`. The buffer
/// the memory is read into is left out of a search of this process's own memory.
struct MaskedSecret {
    let masked: [UInt8]
    let pad: [UInt8]

    init(_ secret: SecretBytes) {
        let pad = Random.bytes(secret.count)
        var masked = [UInt8](repeating: 0, count: secret.count)
        secret.withBytes { p in for i in 0..<secret.count { masked[i] = p[i] ^ pad[i] } }
        self.pad = pad
        self.masked = masked
    }

    /// How many places of `pid`'s writable memory hold the secret (nil: the memory could
    /// not be read).
    func places(inProcess pid: pid_t = getpid()) -> Int? {
        guard let maps = try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8) else { return nil }
        let fd = open("/proc/\(pid)/mem", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk + masked.count, alignment: 16)
        defer { buffer.deallocate() }
        let ownStart = UInt(bitPattern: buffer), ownEnd = ownStart + UInt(chunk + masked.count)
        let first = masked[0] ^ pad[0]
        var found = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16) else { continue }
            var at = start
            while at < end {
                let length = Int(min(UInt(chunk), end - at))
                // Overlapping reads, so a secret across a chunk's edge is seen.
                let want = min(length + masked.count - 1, Int(end - at))
                let read = pread(fd, buffer, want, off_t(Int64(bitPattern: UInt64(at))))
                if read > 0 {
                    var offset = 0
                    while offset + masked.count <= read {
                        guard let hit = memchr(buffer + offset, Int32(first), read - offset - masked.count + 1) else { break }
                        let index = buffer.distance(to: hit)
                        let address = at + UInt(index)
                        if !(address >= ownStart && address < ownEnd) && matches(hit.assumingMemoryBound(to: UInt8.self)) { found += 1 }
                        offset = index + 1
                    }
                }
                at += UInt(length)
            }
        }
        return found
    }

    private func matches(_ p: UnsafePointer<UInt8>) -> Bool {
        for i in 0..<masked.count where p[i] != masked[i] ^ pad[i] { return false }
        return true
    }
}
