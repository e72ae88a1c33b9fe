import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT end a running engine cleanly (its sessions saved, its lock released).
enum Signals {
    /// Kept for the life of the process (a released source stops delivering). Written only
    /// by `onTerminate`, once per process on the main thread, and never read:
    /// `nonisolated(unsafe)` because a `Mutex` cannot take the sources, which Dispatch does
    /// not declare `Sendable`.
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
