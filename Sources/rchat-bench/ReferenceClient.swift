import Foundation

/// A reference client of the benchmarks, `Benchmarks/NAME.c` in the package, built with the
/// C compiler into `.build/NAME-with-dashes/NAME` (the first folder above this binary that
/// has the source; .build/release is a link to .build/<triple>/release), again when the
/// source is newer. Written under a name of this process's and renamed into place, so two
/// runs never execute a half-written file. nil, with a note printed, when it cannot be
/// built: the benchmark then prints its own figures alone.
func referenceClient(_ name: String, linking flags: [String], missing hint: String, reference: String) -> String? {
    let above = sequence(first: URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()) {
        $0.path == "/" ? nil : $0.deletingLastPathComponent()
    }
    guard let package = above.first(where: { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Benchmarks/\(name).c").path) }) else {
        print("note: Benchmarks/\(name).c not found above \(CommandLine.arguments[0]): comparison with \(reference) skipped")
        return nil
    }
    let source = package.appendingPathComponent("Benchmarks/\(name).c").path
    let directory = package.appendingPathComponent(".build/" + name.replacingOccurrences(of: "_", with: "-")).path
    let binary = directory + "/" + name
    func modified(_ path: String) -> Date? { (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date }
    if let built = modified(binary), let written = modified(source), built >= written { return binary }
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let partial = binary + ".\(getpid())"
    guard let compiler = which("cc") ?? which("gcc") ?? which("clang"),
          let cc = try? Child(compiler, ["-O2", "-o", partial, source] + flags) else {
        print("note: no C compiler to build the \(reference) reference client (\(name).c): comparison skipped")
        return nil
    }
    cc.process.waitUntilExit()
    guard cc.process.terminationStatus == 0, rename(partial, binary) == 0 else {
        try? FileManager.default.removeItem(atPath: partial)
        print("note: \(name).c did not build (\(hint)): comparison with \(reference) skipped")
        return nil
    }
    return binary
}

/// A `KEY=value` field of a reference client's `RESULT …` line, 0 when absent.
func resultField(_ line: String?, _ name: String) -> Double {
    guard let line else { return 0 }
    for part in line.split(separator: " ") where part.hasPrefix(name + "=") { return Double(part.dropFirst(name.count + 1)) ?? 0 }
    return 0
}
