import Foundation

/// mosquitto 2.0 at QoS 1 through the reference client `Benchmarks/mq_bench.c`, built with
/// the C compiler and libmosquitto-dev into the package's `.build/mq-bench/` (`make
/// bench-relay` installs mosquitto and libmosquitto-dev). The broker's configuration lives
/// in the run's own temporary directory.
struct MosquittoReference {
    let bench: String
    let broker: Child
    let port: UInt16
    let directory: String

    struct Figures {
        var throughput = 0.0
        var p50 = 0.0, p99 = 0.0
        var drain = 0.0
        var bytesPerHeld = 0.0
    }

    /// nil (with the reason printed) when mosquitto or the reference client is missing.
    static func start() -> MosquittoReference? {
        guard let mosquitto = which("mosquitto") else { print("note: mosquitto not installed (make bench-relay installs it): comparison skipped"); return nil }
        guard let bench = buildClient() else { return nil }
        let directory = NSTemporaryDirectory() + "rchat-bench-mq-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let port = freePort()
        let config = directory + "/mosquitto.conf"
        try? """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence false
            max_queued_messages 200000
            max_queued_bytes 0

            """.write(toFile: config, atomically: true, encoding: .utf8)
        guard let broker = try? Child(mosquitto, ["-c", config]) else { print("note: mosquitto did not start: comparison skipped"); return nil }
        // Ready when it accepts a connection.
        for _ in 0..<200 {
            if let s = try? Child(bench, ["sub", String(port), "probe", "1", "probe", "subonly", "2"]) {
                s.process.waitUntilExit()
                if s.process.terminationStatus == 0 { break }
            }
            usleep(20_000)
        }
        return MosquittoReference(bench: bench, broker: broker, port: port, directory: directory)
    }

    /// `.build/mq-bench/mq_bench` in the package (the first folder above this binary that
    /// has `Benchmarks/mq_bench.c`; .build/release is a link to .build/<triple>/release),
    /// built again when the source is newer. Written under a name of this process's and
    /// renamed into place, so two runs never execute a half-written file.
    private static func buildClient() -> String? {
        let above = sequence(first: URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()) {
            $0.path == "/" ? nil : $0.deletingLastPathComponent()
        }
        guard let package = above.first(where: { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Benchmarks/mq_bench.c").path) }) else {
            print("note: Benchmarks/mq_bench.c not found above \(CommandLine.arguments[0]): comparison skipped")
            return nil
        }
        let source = package.appendingPathComponent("Benchmarks/mq_bench.c").path
        let directory = package.appendingPathComponent(".build/mq-bench").path
        let bench = directory + "/mq_bench"
        func modified(_ path: String) -> Date? { (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date }
        if let built = modified(bench), let written = modified(source), built >= written { return bench }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let partial = bench + ".\(getpid())"
        guard let compiler = which("cc") ?? which("gcc") ?? which("clang"),
              let cc = try? Child(compiler, ["-O2", "-o", partial, source, "-lmosquitto", "-lpthread"]) else {
            print("note: no C compiler to build the mosquitto reference client (mq_bench.c): comparison skipped")
            return nil
        }
        cc.process.waitUntilExit()
        guard cc.process.terminationStatus == 0, rename(partial, bench) == 0 else {
            try? FileManager.default.removeItem(atPath: partial)
            print("note: mq_bench.c did not build (is libmosquitto-dev installed? make bench-relay installs it): comparison skipped")
            return nil
        }
        return bench
    }

    private func field(_ line: String?, _ name: String) -> Double {
        guard let line else { return 0 }
        for part in line.split(separator: " ") where part.hasPrefix(name + "=") { return Double(part.dropFirst(name.count + 1)) ?? 0 }
        return 0
    }

    func online(frames: Int, rate: Int) -> (rate: Double, p50: Double, p99: Double) {
        let topic = "t\(rate)"
        guard let sub = try? Child(bench, ["sub", String(port), topic, String(frames), "c\(rate)", "online", "60"]) else { return (0, 0, 0) }
        _ = sub.line(startingWith: "READY")
        guard let pub = try? Child(bench, ["pub", String(port), topic, String(frames), "256", "100", String(rate), "60"]) else { return (0, 0, 0) }
        let pubLine = pub.line(startingWith: "RESULT")
        let subLine = sub.line(startingWith: "RESULT")
        pub.process.waitUntilExit(); sub.process.waitUntilExit()
        return (field(subLine, "rate") > 0 ? min(field(subLine, "rate"), field(pubLine, "rate")) : field(pubLine, "rate"),
                field(subLine, "lat_us_p50"), field(subLine, "lat_us_p99"))
    }

    func drain(frames: Int) -> (rate: Double, bytesPerHeld: Double) {
        guard let subonly = try? Child(bench, ["sub", String(port), "q", String(frames), "drainer", "subonly", "10"]) else { return (0, 0) }
        subonly.process.waitUntilExit()
        let before = residentBytes(broker.pid)
        guard let pub = try? Child(bench, ["pub", String(port), "q", String(frames), "256", "100", "0", "120"]) else { return (0, 0) }
        _ = pub.line(startingWith: "RESULT")
        pub.process.waitUntilExit()
        let after = residentBytes(broker.pid)
        guard let sub = try? Child(bench, ["sub", String(port), "q", String(frames), "drainer", "drain", "120"]) else { return (0, 0) }
        let line = sub.line(startingWith: "RESULT")
        sub.process.waitUntilExit()
        return (field(line, "rate"), Double(after - before) / Double(frames))
    }

    func stop() {
        broker.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
