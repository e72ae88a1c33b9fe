import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT end a running engine cleanly (its sessions saved, its lock released).
enum Signals {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func onTerminate(_ action: @escaping @Sendable () -> Void) {
        for signal in [SIGTERM, SIGINT] {
            Glibc.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
            source.setEventHandler(handler: action)
            source.resume()
            sources.append(source)
        }
    }
}
