import Foundation
import XCTest

/// Runs the built `rchat` (and `rchat-relay`) binaries as a user would, each test in its
/// own temporary homes and device directories.
struct Run {
    let status: Int32
    let stdout: String
    let stderr: String
    var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }
}

enum Binaries {
    /// The directory holding the built products: next to the test bundle.
    static let directory: URL = {
        var candidates: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        for bundle in Bundle.allBundles { candidates.append(bundle.bundleURL.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for dir in candidates where FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("rchat").path) {
            return dir
        }
        fatalError("cannot find the built rchat binary near \(candidates.map(\.path)); run `swift build` first")
    }()

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

final class Sandbox {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    /// Runs `rchat ARGS` with `--home` and `--device-dir` for the named person.
    @discardableResult
    func rchat(_ person: String, _ args: [String], env: [String: String] = [:], device: String? = nil, stdin: String? = nil) throws -> Run {
        try run(Binaries.path("rchat"), args + ["--home", path("\(person)-home"), "--device-dir", path(device ?? "\(person)-device")], env: env, stdin: stdin)
    }

    func run(_ executable: String, _ args: [String], env: [String: String] = [:], stdin: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        var environment = ProcessInfo.processInfo.environment
        environment["RCHAT_PASSPHRASE"] = nil
        for (k, v) in env { environment[k] = v }
        process.environment = environment
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a full pipe cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        group.wait()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self))
    }

    func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
    }

    /// Every file under a directory with its bytes: to prove a failed command changed nothing.
    func snapshot(_ dir: String) -> [String: Data] {
        var result: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: dir) else { return result }
        for case let rel as String in walker {
            let full = "\(dir)/\(rel)"
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDir), !isDir.boolValue {
                result[rel] = FileManager.default.contents(atPath: full)
            }
        }
        return result
    }
}

/// A relay address for accounts that never connect in these tests.
let offlineRelay = "127.0.0.1:9/" + String(repeating: "A", count: 43)

extension Sandbox {
    /// An account for each of `people` on the offline relay (named as the word, capitalized);
    /// the first adds every other's code.
    func accounts(_ people: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for person in people {
            let run = try rchat(person, ["init", "--name", person.capitalized, "--relay", offlineRelay])
            XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        }
        for person in people.dropFirst() {
            let add = try rchat(people[0], ["add", try rchat(person, ["code"]).lines[0]])
            XCTAssertEqual(add.status, 0, add.stderr, file: file, line: line)
        }
    }
}

func XCTAssertFailsCleanly(_ run: Run, status: Int32, mentions: String, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(run.status, status, "stderr: \(run.stderr)", file: file, line: line)
    let errLines = run.stderr.split(separator: "\n")
    XCTAssertEqual(errLines.count, 1, "one line on stderr, got: \(run.stderr)", file: file, line: line)
    XCTAssertTrue(run.stderr.lowercased().contains(mentions.lowercased()), "\(run.stderr) should mention \(mentions)", file: file, line: line)
}
