public enum RoleColors {
    public static func foreground(_ role: ColorRole, colors: Int) -> Int? {
        switch role {
        case .normal, .quiet: return nil
        case .accent: return 6
        case .good: return 2
        case .warning: return 3
        case .danger: return 1
        }
    }
    public static func sgr(_ color: Int) -> String { String(30 + color) }
}
