import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The passphrase for an account export: `RCHAT_PASSPHRASE`, or asked on the terminal
/// without echo. With no terminal and no variable, a clear usage error.
enum Passphrase {
    static func obtain(confirm: Bool) -> String {
        if let fromEnvironment = ProcessInfo.processInfo.environment["RCHAT_PASSPHRASE"] {
            guard !fromEnvironment.isEmpty else { Exit.usage("RCHAT_PASSPHRASE is empty") }
            return fromEnvironment
        }
        guard isatty(STDIN_FILENO) != 0 else {
            Exit.usage("no passphrase: set RCHAT_PASSPHRASE or run in a terminal")
        }
        guard let first = getpass("Passphrase: ").map({ String(cString: $0) }), !first.isEmpty else {
            Exit.usage("an empty passphrase is not allowed")
        }
        if confirm {
            let second = getpass("Passphrase again: ").map { String(cString: $0) }
            guard second == first else { Exit.usage("the passphrases do not match") }
        }
        return first
    }
}
