import Foundation
import XCTest

/// Package.swift says what each target may use, and the sources agree: every module a
/// target imports is one it declares (not one that happens to be built because another
/// dependency pulls it in), and every target it declares is imported somewhere in it.
final class PackageManifestTests: XCTestCase {
    /// Modules of the toolchain and the system, never declared in the manifest.
    static let platformModules: Set<String> = ["Swift", "Foundation", "FoundationEssentials", "Glibc", "Dispatch",
                                               "Synchronization", "XCTest", "Testing", "_Concurrency"]

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Each target of the manifest with the dependencies it declares (system libraries: none).
    static func declaredTargets() throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try Regex(#"\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"(?:\s*,\s*dependencies:\s*\[([^\]]*)\])?"#)
        var targets: [String: Set<String>] = [:]
        for match in manifest.matches(of: target) {
            guard let name = match.output[1].substring.map(String.init) else { continue }
            let list = match.output[2].substring.map(String.init) ?? ""
            targets[name] = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \n\"")) }
                                .filter { !$0.isEmpty })
        }
        return targets
    }

    /// The modules the Swift files under `directory` import, each with one file that does.
    static func imports(under directory: URL) throws -> [String: String] {
        let line = try Regex(#"(?m)^[ \t]*(?:@\w+[ \t]+)*(?:(?:public|package|internal|fileprivate|private)[ \t]+)?import[ \t]+(?:(?:struct|class|enum|protocol|func|var|let|typealias)[ \t]+)?(\w+)"#)
        var found: [String: String] = [:]
        guard let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return found }
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: line) {
                guard let module = match.output[1].substring.map(String.init), !platformModules.contains(module) else { continue }
                found[module] = found[module] ?? file.path.replacingOccurrences(of: packageRoot.path + "/", with: "")
            }
        }
        return found
    }

    func testEveryImportIsDeclaredAndEveryDeclarationImported() throws {
        let targets = try Self.declaredTargets()
        XCTAssertGreaterThan(targets.count, 20, "the manifest's targets were not found")
        var checked = 0
        for (name, declared) in targets.sorted(by: { $0.key < $1.key }) {
            let directories = ["Sources", "Tests"].map { Self.packageRoot.appendingPathComponent($0).appendingPathComponent(name) }
            guard let directory = directories.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
                XCTFail("\(name): no Sources/\(name) or Tests/\(name)")
                continue
            }
            let imported = try Self.imports(under: directory)
            for (module, file) in imported.sorted(by: { $0.key < $1.key }) where !declared.contains(module) {
                XCTFail("\(file) imports \(module), which Package.swift does not declare for \(name)")
            }
            for module in declared.sorted() where imported[module] == nil {
                XCTFail("Package.swift declares \(module) for \(name), which none of its files imports")
            }
            checked += 1
        }
        XCTAssertEqual(checked, targets.count)
    }

    /// The relay speaks the protocol through RChatWire; it never links the client.
    func testTheRelayDependsOnTheWireProtocolNotOnTheClient() throws {
        let targets = try Self.declaredTargets()
        let relay = try XCTUnwrap(targets["RChatRelay"])
        XCTAssertTrue(relay.contains("RChatWire"))
        XCTAssertFalse(relay.contains("RChatRelayClient"))
        XCTAssertEqual(targets["RChatWire"], ["RChatCore", "RChatCrypto"], "the wire layouts do no I/O")
    }
}
