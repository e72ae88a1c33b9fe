// swift-tools-version:6.0
import PackageDescription

// Layers (docs/ARCHITECTURE.md): C module maps → pure Core → Crypto / SQL / Net → Store, Wire →
// Relay, RelayClient → (Engine, TUI) → Simulation, thin executables. Every module a target
// imports is declared here, and every one declared is imported (`PackageManifestTests`).
let package = Package(
    name: "rchat",
    products: [
        .executable(name: "rchat", targets: ["rchat"]),
        .executable(name: "rchat-relay", targets: ["rchat-relay"]),
        .executable(name: "rchat-bench", targets: ["rchat-bench"]),
    ],
    targets: [
        // C libraries, wrapped: module maps plus a shim for what Swift cannot import.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CNcursesw", providers: [.apt(["libncurses-dev"])]),
        .systemLibrary(name: "CEpoll"),
        // The C library's wcwidth in a UTF-8 locale: the column widths ncurses and terminals use.
        .systemLibrary(name: "CWidth"),
        // Media: libjpeg-turbo (a compiled C shim: its errors longjmp), libpng's simplified API,
        // libchafa for terminal previews, libopusenc/libopusfile for Ogg Opus voice notes.
        .target(name: "CJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CChafa", pkgConfig: "chafa", providers: [.apt(["libchafa-dev", "libglib2.0-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opusfile", providers: [.apt(["libopus-dev", "libopusenc-dev", "libopusfile-dev"])]),
        // GIO's GDBus: desktop notifications over the session bus (never a command line). Its
        // headers are glib-2.0's (gio-2.0's pkg-config adds -pthread, which SwiftPM refuses);
        // the module map links gio.
        .systemLibrary(name: "CGio", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // The NATS C client: the relay's cluster mode keeps mailboxes in JetStream.
        .systemLibrary(name: "CNats", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),

        // Pure logic: no I/O.
        .target(name: "RChatCore", dependencies: ["CWidth"]),
        // libsodium, wrapped in the product's words.
        .target(name: "RChatCrypto", dependencies: ["RChatCore", "CSodium"]),
        // A thin SQLite layer shared by the client store and the relay's persistence.
        .target(name: "RChatSQL", dependencies: ["CSQLite"]),
        // The client's database: schema, migrations, queries.
        .target(name: "RChatStore", dependencies: ["RChatCore", "RChatSQL"]),
        // Sockets and the epoll event loop.
        .target(name: "RChatNet", dependencies: ["RChatCore", "CEpoll"]),
        // Command lines: declared options, their parser and the help generated from them.
        .target(name: "RChatCommandLine"),
        // The relay protocol as bytes, shared by both ends: message layouts, identifiers, the
        // handshake's key schedule and the transport cipher. No I/O.
        .target(name: "RChatWire", dependencies: ["RChatCore", "RChatCrypto"]),
        // The relay as a library.
        .target(name: "RChatRelay", dependencies: ["RChatCore", "RChatCrypto", "RChatSQL", "RChatNet", "RChatWire", "RChatCommandLine", "CEpoll", "CNats"]),
        // The client side of the relay protocol: a connection's threads and events.
        .target(name: "RChatRelayClient", dependencies: ["RChatCore", "RChatCrypto", "RChatNet", "RChatWire"]),

        // Photos and voice notes: decoding, terminal previews, Ogg Opus, the recorder and player.
        .target(name: "RChatMedia", dependencies: ["RChatCore", "CJPEG", "CPNG", "CChafa", "COpus"]),

        // Accounts, contacts, sessions, outbox, receipts, recovery: the store-and-sync engine.
        .target(name: "RChatEngine", dependencies: ["RChatCore", "RChatCrypto", "RChatSQL", "RChatStore", "RChatNet", "RChatWire", "RChatRelayClient",
                                                   "RChatMedia", "CGio"]),

        // The full-screen view: a screen model of cells, an ncursesw renderer, the key map.
        // It sees the engine only through Core's ChatModel.
        .target(name: "RChatTUI", dependencies: ["RChatCore", "RChatMedia", "CNcursesw"]),

        .executableTarget(name: "rchat", dependencies: ["RChatCore", "RChatEngine", "RChatTUI", "RChatRelay", "RChatCommandLine", "RChatWire"]),
        .executableTarget(name: "rchat-relay", dependencies: ["RChatCore", "RChatRelay", "RChatWire"]),
        // The deterministic simulation: accounts and the relay's logic in one process on
        // virtual time, over an in-memory network (docs/ARCHITECTURE.md).
        .target(name: "RChatSimulation", dependencies: ["RChatCore", "RChatCrypto", "RChatNet", "RChatStore", "RChatWire", "RChatEngine",
                                                       "RChatRelay", "RChatRelayClient", "RChatCommandLine", "CSimDisk"]),
        // The simulation's disk under SQLite: files in memory that a power cut tears.
        .target(name: "CSimDisk", linkerSettings: [.linkedLibrary("sqlite3")]),
        .executableTarget(name: "rchat-simulate", dependencies: ["RChatSimulation"]),
        // Benchmarks: separate from tests, each printing a ratio against a reference.
        .executableTarget(name: "rchat-bench", dependencies: ["RChatCore", "RChatCrypto", "RChatSQL", "RChatStore", "RChatNet", "RChatWire", "RChatRelayClient", "RChatEngine", "RChatTUI", "RChatCommandLine"]),

        // For tests: a private session bus (dbus-daemon) and a notification service on it that
        // records what it is sent and can be clicked.
        .target(name: "DesktopBusFixture", dependencies: ["CGio"], path: "Tests/DesktopBusFixture"),
        .testTarget(name: "RChatCoreTests", dependencies: ["RChatCore", "CWidth"]),
        .testTarget(name: "RChatCommandLineTests", dependencies: ["RChatCommandLine"]),
        .testTarget(name: "RChatCryptoTests", dependencies: ["RChatCrypto", "RChatCore"]),
        .testTarget(name: "RChatMediaTests", dependencies: ["RChatMedia", "CJPEG", "CPNG", "RChatCore"]),
        .testTarget(name: "RChatSQLTests", dependencies: ["RChatSQL"]),
        .testTarget(name: "RChatStoreTests", dependencies: ["RChatCore", "RChatSQL", "RChatStore"]),
        .testTarget(name: "RChatNetTests", dependencies: ["RChatCore", "RChatNet"]),
        .testTarget(name: "RChatEngineTests", dependencies: ["RChatCore", "RChatCrypto", "RChatStore", "RChatSQL", "RChatWire", "RChatRelayClient", "RChatEngine",
                                                        "DesktopBusFixture"]),
        .testTarget(name: "RChatTUITests", dependencies: ["RChatCore", "RChatTUI", "RChatMedia", "CNcursesw"]),
        .testTarget(name: "RChatRelayTests", dependencies: ["RChatCore", "RChatCrypto", "RChatNet", "RChatWire", "RChatRelay", "RChatRelayClient", "RChatSQL", "CEpoll"]),
        // Three nats-server processes, relay nodes in cluster mode and clients on different nodes.
        .testTarget(name: "RChatClusterTests", dependencies: ["RChatCore", "RChatCrypto", "RChatNet", "RChatWire", "RChatRelayClient"]),
        .testTarget(name: "RChatSimulationTests", dependencies: ["RChatSimulation", "RChatCore", "RChatCrypto", "RChatSQL", "RChatStore"]),
        // Runs the built executables: the scripting interface as a user sees it.
        .testTarget(name: "RChatCLITests", dependencies: ["RChatCore", "RChatCrypto", "RChatSQL", "RChatStore", "RChatWire", "RChatRelay", "RChatRelayClient",
                                                     "RChatEngine", "RChatMedia", "RChatTUI", "CWidth", "DesktopBusFixture"]),
    ],
    swiftLanguageModes: [.v6]
)

// The fuzz targets (`make fuzz`, docs/ARCHITECTURE.md "Fuzzing"): one libFuzzer driver over the
// real decoders, declared only when RCHAT_FUZZ=1, built with -sanitize=fuzzer,address into
// .build/fuzz, so `swift build` and `make test` never build it.
if Context.environment["RCHAT_FUZZ"] == "1" {
    package.targets += [
        // libFuzzer's entry point, which -sanitize=fuzzer links.
        .systemLibrary(name: "CFuzzer"),
        .executableTarget(name: "rchat-fuzz", dependencies: ["CFuzzer", "CNcursesw", "RChatCore", "RChatCrypto", "RChatNet", "RChatWire", "RChatRelay", "RChatRelayClient",
                                                            "RChatEngine", "RChatMedia", "RChatTUI"]),
    ]
}
