import Foundation
import Glibc
import RChatCommandLine
import RChatCore
import RChatCrypto
import RChatNet

/// `rchat-bench files`: one file from one account to another through a real `rchat-relay`
/// on loopback, with two real `rchat sync` processes, timed from `rchat send --file` to
/// Delivered; beside it, in the same run, the same bytes copied over a plain loopback TCP
/// connection into a file, and the secretstream encryption alone. Prints the rates, the
/// ratio to the TCP copy (target ≥ 25 %) and how much each process's RSS grew over its idle
/// size while the file moved (target ≤ 32 MiB, flat in the file's size).
struct FileBenchmark {
    static let megabytes = Declared.integer("--mb", in: 1...4096, default: 256, help: "the file's size in MiB")
    static let command = BenchmarkCommand(name: "files", options: [megabytes.option])

    let megabytes: Int

    init(arguments: [String]) {
        megabytes = Self.command.parse(arguments)[Self.megabytes]
    }

    private func fail(_ message: String) -> Never { benchmarkFailure("files", message) }

    func run() {
        NetSetup.ignoreBrokenPipes()
        let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let rchat = binaries.appendingPathComponent("rchat").path
        let directory = NSTemporaryDirectory() + "rchat-bench-files-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        startedChildren.withLock { $0.directory = directory }
        let bytes = megabytes * 1024 * 1024
        let file = directory + "/payload.bin"
        writeRandomFile(file, bytes: bytes)

        guard let relay = try? Child(binaries.appendingPathComponent("rchat-relay").path,
                                     ["--listen", "127.0.0.1:0", "--key-file", directory + "/relay.key"]),
              let line = relay.line(startingWith: "relay ") else { fail("cannot start rchat-relay next to rchat-bench") }
        defer { relay.stop() }
        startedChildren.withLock { $0.pids.append(relay.pid) }
        let address = String(line.dropFirst(6))
        func env(_ who: String) -> [String: String] {
            var e = ProcessInfo.processInfo.environment
            e["RCHAT_HOME"] = "\(directory)/\(who)-home"
            e["RCHAT_DEVICE_DIR"] = "\(directory)/\(who)-device"
            return e
        }
        func cli(_ who: String, _ args: [String]) -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: rchat)
            p.arguments = args
            p.environment = env(who)
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            do { try p.run() } catch { fail("cannot run rchat: \(error)") }
            let data = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { fail("rchat \(args.joined(separator: " ")) failed") }
            return String(decoding: data, as: UTF8.self)
        }
        for who in ["alice", "bob"] {
            _ = cli(who, ["init", "--name", who, "--relay", address])
            _ = cli(who, ["settings", "receipt-window-ms", "0"])
            _ = cli(who, ["settings", "max-attachment-mb", String(max(100, megabytes))])
        }
        _ = cli("alice", ["add", cli("bob", ["code"]).split(separator: "\n")[0].description])
        _ = cli("bob", ["add", cli("alice", ["code"]).split(separator: "\n")[0].description])
        func sync(_ who: String) -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: rchat)
            p.arguments = ["sync", "--seconds", "3600"]
            p.environment = env(who)
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            do { try p.run() } catch { fail("cannot start rchat sync") }
            startedChildren.withLock { $0.pids.append(p.processIdentifier) }
            return p
        }
        let alice = sync("alice"), bob = sync("bob")
        defer {
            for p in [alice, bob] where p.isRunning { kill(p.processIdentifier, SIGTERM); p.waitUntilExit() }
        }
        func status(_ id: String) -> String? {
            for line in cli("alice", ["list", "bob", "--json"]).split(separator: "\n") where line.contains(id) {
                for s in ["Delivered", "Read", "Sent", "Sending", "Not confirmed"] where line.contains("\"status\":\"\(s)\"") { return s }
            }
            return nil
        }
        func waitDelivered(_ id: String, timeout: Double, sample: () -> Void = {}) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while Date() < deadline {
                if status(id) == "Delivered" { return true }
                sample()
                usleep(50_000)
            }
            return false
        }
        let warm = cli("alice", ["send", "bob", "warm-up"]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard waitDelivered(warm, timeout: 60) else { fail("no session within 60 s") }
        let idle = [residentBytes(alice.processIdentifier), residentBytes(bob.processIdentifier), residentBytes(relay.pid)]
        var peak = idle

        print("rchat-bench files: a \(megabytes) MiB file, rchat send --file to Delivered, two rchat sync processes and rchat-relay on loopback")
        let start = Date()
        let id = cli("alice", ["send", "bob", "--file", file]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard waitDelivered(id, timeout: 3600, sample: {
            let now = [residentBytes(alice.processIdentifier), residentBytes(bob.processIdentifier), residentBytes(relay.pid)]
            peak = zip(peak, now).map { max($0, $1) }
        }) else { fail("the file was not Delivered within an hour") }
        let rchatSeconds = Date().timeIntervalSince(start)

        let tcpSeconds = tcpCopy(file, to: directory + "/tcp-copy.bin", bytes: bytes)
        let cryptoSeconds = encryptOnly(file, bytes: bytes)
        func rate(_ s: Double) -> String { String(format: "%.1f MiB/s", Double(megabytes) / s) }
        print(String(format: "  rchat, send to Delivered:      %7.2f s  %@", rchatSeconds, rate(rchatSeconds)))
        print(String(format: "  plain loopback TCP copy:       %7.2f s  %@", tcpSeconds, rate(tcpSeconds)))
        print(String(format: "  secretstream encryption alone: %7.2f s  %@", cryptoSeconds, rate(cryptoSeconds)))
        print(String(format: "  rchat / TCP copy: %.1f %% (target ≥ 25 %%)", 100 * tcpSeconds / rchatSeconds))
        for (name, i) in [("sender", 0), ("receiver", 1), ("relay", 2)] {
            print(String(format: "  RSS %@: idle %.1f MiB, peak %.1f MiB, grew %.1f MiB (target ≤ 32 MiB)", name,
                         Double(idle[i]) / 1_048_576, Double(peak[i]) / 1_048_576, Double(peak[i] - idle[i]) / 1_048_576))
        }
    }

    private func writeRandomFile(_ path: String, bytes: Int) {
        guard FileManager.default.createFile(atPath: path, contents: nil), let out = FileHandle(forWritingAtPath: path) else {
            fail("cannot write \(path)")
        }
        var g = SystemRandomNumberGenerator()
        var block = [UInt64](repeating: 0, count: 1 << 17)
        var written = 0
        while written < bytes {
            for i in block.indices { block[i] = g.next() }
            let n = min(bytes - written, block.count * 8)
            block.withUnsafeBytes { out.write(Data($0.prefix(n))) }
            written += n
        }
        try? out.close()
    }

    /// The same bytes read from the file, through a loopback TCP connection, into a file
    /// that is fsynced: what any file transfer costs at least.
    private func tcpCopy(_ path: String, to target: String, bytes: Int) -> Double {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) } }
        listen(listener, 1)
        let start = Date()
        let done = DispatchSemaphore(value: 0)
        let receiver = Thread {
            defer { done.signal() }
            let fd = accept(listener, nil, nil)
            let out = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            var buf = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if n <= 0 { break }
                _ = buf.withUnsafeBytes { write(out, $0.baseAddress!, n) }
            }
            fsync(out)
            close(out)
            close(fd)
        }
        receiver.start()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, len) } }
        let input = open(path, O_RDONLY)
        var buf = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buf.withUnsafeMutableBytes { read(input, $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            var off = 0
            while off < n { off += buf.withUnsafeBytes { max(0, write(fd, $0.baseAddress! + off, n - off)) } }
        }
        close(input)
        close(fd)
        done.wait()
        close(listener)
        return Date().timeIntervalSince(start)
    }

    /// The file read and encrypted chunk by chunk, nothing written.
    private func encryptOnly(_ path: String, bytes: Int) -> Double {
        let start = Date()
        let input = open(path, O_RDONLY)
        defer { close(input) }
        var encryptor = FileStream.Encryptor(key: FileStream.generateKey())
        var buf = [UInt8](repeating: 0, count: FileStream.plainChunkBytes)
        var done = 0
        var sink = 0
        while done < bytes {
            let n = buf.withUnsafeMutableBytes { read(input, $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            done += n
            sink &+= buf.withUnsafeBytes { encryptor.seal(UnsafeRawBufferPointer(rebasing: $0.prefix(n)), final: done >= bytes).count }
        }
        if sink == 0 { print("  (nothing encrypted)") }
        return Date().timeIntervalSince(start)
    }
}
