import Foundation

/// Where an account's data and this machine's device keystore live (README, "Where things are kept"):
/// `--home` / `RCHAT_HOME`, default `$XDG_DATA_HOME/rchat`; `--device-dir` /
/// `RCHAT_DEVICE_DIR`, default `$XDG_STATE_HOME/rchat-device`. They are kept apart so that
/// deleting the data directory ("reinstall") keeps the device key.
public struct Locations: Sendable, Equatable {
    public let home: String
    public let deviceDirectory: String

    public init(home: String, deviceDirectory: String) {
        self.home = home
        self.deviceDirectory = deviceDirectory
    }

    public static func resolve(home: String?, deviceDirectory: String?,
                               environment: [String: String] = ProcessInfo.processInfo.environment) -> Locations {
        let userHome = environment["HOME"] ?? NSHomeDirectory()
        func nonEmpty(_ s: String?) -> String? { s.flatMap { $0.isEmpty ? nil : $0 } }
        let dataBase = nonEmpty(environment["XDG_DATA_HOME"]) ?? "\(userHome)/.local/share"
        let stateBase = nonEmpty(environment["XDG_STATE_HOME"]) ?? "\(userHome)/.local/state"
        return Locations(
            home: nonEmpty(home) ?? nonEmpty(environment["RCHAT_HOME"]) ?? "\(dataBase)/rchat",
            deviceDirectory: nonEmpty(deviceDirectory) ?? nonEmpty(environment["RCHAT_DEVICE_DIR"]) ?? "\(stateBase)/rchat-device")
    }

    public var databasePath: String { "\(home)/rchat.db" }
    public var deviceKeyPath: String { "\(deviceDirectory)/device.key" }
}
