import CFuzzer
import Foundation

// `rchat-fuzz TARGET [libFuzzer options] [CORPUS…]`: libFuzzer over one decoder of bytes someone
// else chose (`make fuzz`, docs/ARCHITECTURE.md "Fuzzing"). `rchat-fuzz --list` names the
// targets; `rchat-fuzz --write-corpus DIR` writes each target's seeds, made by the real
// encoders, into DIR/TARGET/.

/// One libFuzzer target: `run` feeds an input to the real decoder and traps (a crash to
/// libFuzzer) when an invariant fails; `seeds` are valid inputs made by the real encoders.
protocol FuzzTarget {
    static var name: String { get }
    static func run(_ input: [UInt8])
    static func seeds() -> [[UInt8]]
}

let targets: [any FuzzTarget.Type] = [
    ClientFrameTarget.self, RelayFrameTarget.self, RelayConnectionTarget.self, ContactCodeTarget.self,
    MessageContentTarget.self, EnvelopeTarget.self, HandshakeTarget.self, CouldNotReadTarget.self,
    MessageRequestTarget.self, AttachmentChunkTarget.self, KeyDecoderTarget.self, PastedTextTarget.self,
    ImageTarget.self, OggOpusTarget.self, MembershipChangeTarget.self,
]

/// The target libFuzzer calls (set once, before the driver starts).
nonisolated(unsafe) var selected: (any FuzzTarget.Type)?

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selected?.run(input)
    return 0
}

@MainActor func writeCorpus(to directory: String) throws {
    for target in targets {
        let folder = directory + "/" + target.name
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (i, seed) in target.seeds().enumerated() {
            try Data(seed).write(to: URL(fileURLWithPath: folder + "/seed-\(String(format: "%02d", i))"))
        }
    }
}

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: rchat-fuzz TARGET [libFuzzer options] [CORPUS...] | --list | --write-corpus DIR\n".utf8))
    exit(2)
}

var arguments = CommandLine.arguments
guard arguments.count >= 2 else { usage() }
switch arguments[1] {
case "--list":
    for target in targets { print(target.name) }
case "--write-corpus":
    guard arguments.count == 3 else { usage() }
    do { try writeCorpus(to: arguments[2]) } catch {
        FileHandle.standardError.write(Data("rchat-fuzz: cannot write the corpus: \(error)\n".utf8))
        exit(1)
    }
default:
    guard let target = targets.first(where: { $0.name == arguments[1] }) else {
        FileHandle.standardError.write(Data("rchat-fuzz: no target \(arguments[1]) (see --list)\n".utf8))
        exit(2)
    }
    selected = target
    #if FUZZING
    // libFuzzer sees its own command line: the program, then its options and corpora.
    arguments.remove(at: 1)
    var argc = Int32(arguments.count)
    var cStrings: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let status = cStrings.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var argv = buffer.baseAddress
        return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) }
    }
    exit(status)
    #else
    FileHandle.standardError.write(Data("rchat-fuzz: built without -sanitize=fuzzer (use make fuzz)\n".utf8))
    exit(2)
    #endif
}

/// AddressSanitizer's defaults for this program, read before `main`: no leak report, since
/// Swift's strings tag the high bits of their pointers and LeakSanitizer takes a global made
/// during a run (a lazily built table of strings) for a leak.
@_cdecl("__asan_default_options")
func asanDefaultOptions() -> UnsafePointer<CChar> {
    UnsafeRawPointer(("detect_leaks=0" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
}
