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

    private static func buildClient() -> String? {
        referenceClient("mq_bench", linking: ["-lmosquitto", "-lpthread"],
                        missing: "is libmosquitto-dev installed? make bench-relay installs it", reference: "mosquitto")
    }

    private func field(_ line: String?, _ name: String) -> Double { resultField(line, name) }

    func online(frames: Int, rate: Int) -> (rate: Double, p50: Double, p99: Double) {
        let topic = "t\(rate)"
        guard let sub = try? Child(bench, ["sub", String(port), topic, String(frames), "c\(rate)", "online", "60"]) else { return (0, 0, 0) }
        _ = sub.line(startingWith: "READY")
        guard let pub = try? Child(bench, ["pub", String(port), topic, String(frames), String(RelayBenchmark.payloadBytes), "100", String(rate), "60"]) else { return (0, 0, 0) }
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
        guard let pub = try? Child(bench, ["pub", String(port), "q", String(frames), String(RelayBenchmark.payloadBytes), "100", "0", "120"]) else { return (0, 0) }
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
