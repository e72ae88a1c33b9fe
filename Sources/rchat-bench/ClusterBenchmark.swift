import Foundation
import Glibc
import RChatCommandLine
import RChatCore
import RChatNet
import RChatRelayClient
import RChatWire

/// `rchat-bench cluster`: the relay cluster (three `nats-server`s with JetStream, two
/// `rchat-relay --cluster` nodes; the sender on node 1, the receiver on node 2) beside the
/// single-process relay with `--persist`, same clients and payloads as `rchat-bench
/// relay`, and beside the same load sent straight to JetStream by `Benchmarks/js_bench.c`
/// (the engine's own ceiling). All on loopback; every process it starts is stopped by PID.
struct ClusterBenchmark {
    static let frames = Declared.integer("--frames", in: 1...10_000_000, default: 100_000, help: "frames forwarded online")
    static let paced = Declared.integer("--paced", in: 1...10_000_000, default: 25_000, help: "frames sent at the paced rate for latency")
    static let rate = Declared.integer("--rate", in: 1...1_000_000, default: 5_000, help: "the paced rate, msg/s")
    static let held = Declared.integer("--held", in: 1...10_000_000, default: 100_000, help: "frames held, then drained")
    static let samples = Declared.integer("--samples", in: 1...100, default: 4, help: "RSS samples while the held frames grow")
    static let command = BenchmarkCommand(name: "cluster", options: [frames.option, paced.option, rate.option, held.option, samples.option])

    let frames: Int
    let paced: Int
    let rate: Int
    let held: Int
    let samples: Int

    init(arguments: [String]) {
        let options = Self.command.parse(arguments)
        frames = options[Self.frames]
        paced = options[Self.paced]
        rate = options[Self.rate]
        held = options[Self.held]
        samples = options[Self.samples]
    }

    private func fail(_ message: String) -> Never { benchmarkFailure("cluster", message) }

    func run() {
        NetSetup.ignoreBrokenPipes()
        let relayBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("rchat-relay").path
        let directory = NSTemporaryDirectory() + "rchat-bench-cluster-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        startedChildren.withLock { $0.directory = directory }

        let nats: NATSCluster
        do { nats = try NATSCluster.start(in: directory) } catch { fail(error.description) }
        defer { nats.stop() }
        // Room for every held frame, and no more: the cluster gives its byte budget to
        // JetStream's stream, which the servers must be able to reserve.
        let limits = ["--quota", String(held + 1000), "--max-held-bytes", String(max(1 << 30, held * 1024)), "--quota-bytes", String(1 << 40)]
        let keyFile = directory + "/relay.key"
        // One after the other: the first node writes the key file the second one reads.
        let node1 = startRelay(relayBinary, ["--key-file", keyFile, "--cluster", nats.urls] + limits)
        defer { node1.child.stop() }
        let node2 = startRelay(relayBinary, ["--key-file", keyFile, "--cluster", nats.urls] + limits)
        defer { node2.child.stop() }
        let single = startRelay(relayBinary, ["--key-file", directory + "/single.key", "--persist", directory + "/single.sqlite"] + limits)
        defer { single.child.stop() }
        let jetStream = referenceClient("js_bench", linking: libnatsFlags() + ["-lpthread"],
                                        missing: "is libnats-dev installed? make bench-cluster installs it", reference: "JetStream")

        print("rchat-bench cluster: \(RelayBenchmark.payloadBytes)-byte payloads on loopback, window \(RelayBenchmark.window); 3 nats-servers (JetStream, file storage, 3 replicas),")
        print("  2 relay nodes with --cluster (sender on node 1, receiver on node 2), the single-process relay with --persist,")
        print("  and the same load straight to JetStream by js_bench.c (libnats: publish with acks, a consumer that acknowledges), same run")
        // Eight processes share the machine's cores here: what else runs moves every figure.
        if let load = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) {
            print("  load average at the start: \(load.split(separator: " ").prefix(3).joined(separator: " ")) on \(ProcessInfo.processInfo.activeProcessorCount) cores")
        }

        func ceiling(_ arguments: [String]) -> String? {
            guard let jetStream, let child = try? Child(jetStream, arguments) else { return nil }
            startedChildren.withLock { $0.pids.append(child.pid) }
            let line = child.line(startingWith: "RESULT")
            child.process.waitUntilExit()
            return child.process.terminationStatus == 0 ? line : nil
        }
        let url = "nats://127.0.0.1:\(nats.clientPorts[0])"
        let size = String(RelayBenchmark.payloadBytes), window = String(RelayBenchmark.window)

        let jsOnline = ceiling(["online", url, "ceiling", String(frames), size, window, "0", "3", "120"])
        let clusterOnline = RelayBenchmark.online(from: node1.address, to: node2.address, frames: frames, rate: 0)
        let singleOnline = RelayBenchmark.online(from: single.address, to: single.address, frames: frames, rate: 0)
        line("forward throughput (msg/s)", clusterOnline.rate, resultField(jsOnline, "rate"), singleOnline.rate)

        let jsPaced = ceiling(["online", url, "paced", String(paced), size, window, String(rate), "3", "120"])
        let clusterPaced = RelayBenchmark.online(from: node1.address, to: node2.address, frames: paced, rate: rate)
        let singlePaced = RelayBenchmark.online(from: single.address, to: single.address, frames: paced, rate: rate)
        line("latency p50 at \(rate) msg/s (µs)", clusterPaced.p50, resultField(jsPaced, "lat_us_p50"), singlePaced.p50)
        line("latency p99 at \(rate) msg/s (µs)", clusterPaced.p99, resultField(jsPaced, "lat_us_p99"), singlePaced.p99)

        let jsDrain = ceiling(["drain", url, "drain", String(held), size, window, "3", "300"])
        let clusterDrain = RelayBenchmark.offlineDrain(from: node1.address, to: node2.address, frames: held,
                                                       watching: [node1.child.pid, node2.child.pid], samples: samples)
        let singleDrain = RelayBenchmark.offlineDrain(from: single.address, to: single.address, frames: held,
                                                      watching: [single.child.pid], samples: samples)
        line("offline drain of \(held) held (msg/s)", clusterDrain.rate, resultField(jsDrain, "rate"), singleDrain.rate)

        print("relay RSS as held frames grow (MiB): held → node 1, node 2 | single-process")
        for (c, s) in zip(clusterDrain.resident, singleDrain.resident) {
            let mib = { (bytes: Int) in String(format: "%.1f", Double(bytes) / 1_048_576) }
            print("  \(String(c.held).padding(toLength: 9, withPad: " ", startingAt: 0)) \(mib(c.bytes[0])), \(mib(c.bytes[1])) | \(mib(s.bytes[0]))")
        }
        print(String(format: "relay RSS per held frame (B): node 1 %.1f, node 2 %.1f, single-process %.1f   target: flat on the nodes (the frames live in JetStream)",
                     clusterDrain.bytesPerHeld(0), clusterDrain.bytesPerHeld(1), singleDrain.bytesPerHeld(0)))

        print("ratios:")
        let ceilingRate = resultField(jsOnline, "rate")
        if ceilingRate > 0 {
            let share = clusterOnline.rate / ceilingRate
            print(String(format: "  cluster throughput ÷ JetStream's ceiling   %.0f %%   target ≥ 50 %% ", share * 100) + (share >= 0.5 ? "✓" : "✗"))
        } else {
            print("  cluster throughput ÷ JetStream's ceiling   (no ceiling: js_bench did not run)")
        }
        print(String(format: "  cluster p99 at %d msg/s                 %.2f ms   target ≤ 5 ms ", rate, clusterPaced.p99 / 1000) + (clusterPaced.p99 <= 5000 ? "✓" : "✗"))
        print(String(format: "  cluster ÷ single-process (--persist)      throughput %.2f×, drain %.2f×; latency (single ÷ cluster) p50 %.2f×, p99 %.2f×",
                     ratio(clusterOnline.rate, singleOnline.rate), ratio(clusterDrain.rate, singleDrain.rate),
                     ratio(singlePaced.p50, clusterPaced.p50), ratio(singlePaced.p99, clusterPaced.p99)))
        if resultField(jsDrain, "rate") > 0 {
            print(String(format: "  cluster drain ÷ JetStream's drain         %.0f %%", clusterDrain.rate / resultField(jsDrain, "rate") * 100))
        }
    }

    private func ratio(_ a: Double, _ b: Double) -> Double { b > 0 ? a / b : 0 }

    private func line(_ name: String, _ cluster: Double, _ jetStream: Double, _ single: Double) {
        func format(_ v: Double) -> String { v >= 1000 ? String(format: "%.0f", v) : String(format: "%.1f", v) }
        let pad = name.padding(toLength: 40, withPad: " ", startingAt: 0)
        print("\(pad) cluster \(format(cluster))   JetStream \(jetStream > 0 ? format(jetStream) : "(none)")   single-process \(format(single))")
    }

    /// An `rchat-relay` on a free loopback port, and the address it printed. A cluster node
    /// that exits at start (JetStream, just elected, may not take its stream yet) is started
    /// again for up to 20 s.
    private func startRelay(_ binary: String, _ arguments: [String]) -> (child: Child, address: RelayAddress) {
        let deadline = Date(timeIntervalSinceNow: 20)
        while true {
            guard let child = try? Child(binary, ["--listen", "127.0.0.1:0", "--log-level", "warning"] + arguments, quietStderr: false) else {
                fail("cannot start \(binary)")
            }
            startedChildren.withLock { $0.pids.append(child.pid) }
            if let line = child.line(startingWith: "relay "), let address = try? RelayAddress(parsing: String(line.dropFirst(6))) {
                return (child, address)
            }
            child.stop()
            if Date() > deadline { fail("rchat-relay \(arguments.joined(separator: " ")) printed no address within 20 s") }
            usleep(500_000)
        }
    }

    /// The compiler flags of libnats, from pkg-config (its usual ones when pkg-config is missing).
    private func libnatsFlags() -> [String] {
        guard let pkgConfig = which("pkg-config"), let child = try? Child(pkgConfig, ["--cflags", "--libs", "libnats"]),
              let line = child.readLine() else { return ["-lnats"] }
        child.process.waitUntilExit()
        return line.split(separator: " ").map(String.init)
    }
}

/// `count` nats-servers with JetStream (file storage under `directory`), routed into one
/// cluster on loopback ports, each logging to a file of its own there. Ready once every
/// server has seen the JetStream metadata leader elected.
struct NATSCluster {
    let servers: [Child]
    let clientPorts: [UInt16]

    /// The servers' client URLs, as `--cluster` takes them.
    var urls: String { clientPorts.map { "nats://127.0.0.1:\($0)" }.joined(separator: ",") }

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    static func start(in directory: String, count: Int = 3, timeout: Double = 30) throws(StartFailure) -> NATSCluster {
        guard let binary = which("nats-server") else {
            throw StartFailure(description: "nats-server is not installed (make bench-cluster installs it)")
        }
        let clientPorts = (0..<count).map { _ in freePort() }
        let routePorts = (0..<count).map { _ in freePort() }
        let routes = routePorts.map { "nats://127.0.0.1:\($0)" }.joined(separator: ",")
        var servers: [Child] = []
        for i in 0..<count {
            let arguments = ["-js", "-sd", "\(directory)/nats-\(i + 1)", "-n", "nats-\(i + 1)", "-a", "127.0.0.1", "-p", String(clientPorts[i]),
                             "--cluster_name", "rchat", "--cluster", "nats://127.0.0.1:\(routePorts[i])", "--routes", routes,
                             "-l", "\(directory)/nats-\(i + 1).log"]
            do {
                let server = try Child(binary, arguments)
                servers.append(server)
                startedChildren.withLock { $0.pids.append(server.pid) }
            } catch {
                servers.forEach { $0.stop() }
                throw StartFailure(description: "cannot start nats-server: \(error)")
            }
        }
        let cluster = NATSCluster(servers: servers, clientPorts: clientPorts)
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !(0..<count).allSatisfy({ (try? String(contentsOfFile: "\(directory)/nats-\($0 + 1).log", encoding: .utf8))?.contains("metadata leader") ?? false }) {
            if Date() > deadline || servers.contains(where: { !$0.process.isRunning }) {
                cluster.stop()
                throw StartFailure(description: "the nats-servers elected no JetStream leader within \(Int(timeout)) s")
            }
            usleep(50_000)
        }
        return cluster
    }

    func stop() { servers.forEach { $0.stop() } }
}
