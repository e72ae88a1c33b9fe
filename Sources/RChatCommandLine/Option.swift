/// One declared command-line option: its name, whether it takes a value, and its help line.
/// A program declares its options once; the parser (`OptionParser`), the typed reads
/// (`Declared`) and the help text (`OptionHelp`) all come from that declaration, so an
/// option cannot be accepted without being documented, or documented without being accepted.
public struct Option: Sendable {
    public enum Kind: Sendable {
        /// Present or not; takes no value.
        case flag
        /// Takes the next word (or the text after `=`). `refusal` says why a text is not
        /// accepted ("a whole number from 1 to 100"), nil when it is.
        case value(placeholder: String, refusal: @Sendable (String) -> String?)
    }

    /// `--name`; what every message and lookup uses.
    public let name: String
    /// Other spellings of the same option (`-h` for `--help`).
    public let aliases: [String]
    public let kind: Kind
    /// One line (or several, separated by line breaks) shown beside the name in the help.
    public let help: String
    /// Every value it accepts, when they are few (a choice's cases): what shell completion
    /// offers. Empty for free text, numbers and paths.
    public let values: [String]

    public init(_ name: String, aliases: [String] = [], kind: Kind, help: String, values: [String] = []) {
        self.name = name
        self.aliases = aliases
        self.kind = kind
        self.help = help
        self.values = values
    }

    /// A bare switch: `--json`.
    public static func flag(_ name: String, aliases: [String] = [], help: String) -> Option {
        Option(name, aliases: aliases, kind: .flag, help: help)
    }

    /// A value taken as text, whatever it is: `--name NAME`.
    public static func text(_ name: String, _ placeholder: String, help: String) -> Option {
        Option(name, kind: .value(placeholder: placeholder, refusal: { _ in nil }), help: help)
    }

    public var placeholder: String? {
        if case .value(let placeholder, _) = kind { return placeholder }
        return nil
    }

    /// How the option reads in a usage line: `--quota N`, `--json`.
    public var synopsis: String { placeholder.map { "\(name) \($0)" } ?? name }
}

/// An option whose value has a type and a default: `arguments[Self.quota]` is an `Int`,
/// the declared default when the option is absent. The text is checked while parsing, so
/// reading a value that was given never fails.
public struct Declared<Value: Sendable>: Sendable {
    public let option: Option
    public let defaultValue: Value
    private let convert: @Sendable (String) -> Value?

    /// `expected` completes "--x must be …": "a whole number from 1 to 10".
    public init(_ name: String, _ placeholder: String, default defaultValue: Value, help: String,
                expected: String, values: [String] = [], convert: @escaping @Sendable (String) -> Value?) {
        self.option = Option(name, kind: .value(placeholder: placeholder, refusal: { convert($0) == nil ? expected : nil }),
                             help: help, values: values)
        self.defaultValue = defaultValue
        self.convert = convert
    }

    /// The value of `text`, which the parser has already accepted.
    func value(of text: String) -> Value { convert(text) ?? defaultValue }
}

extension Declared where Value == Int {
    /// A whole number within `range`.
    public static func integer(_ name: String, _ placeholder: String = "N", in range: ClosedRange<Int>, default value: Int,
                               help: String) -> Declared {
        Declared(name, placeholder, default: value, help: help + " (default \(value))",
                 expected: "a whole number from \(range.lowerBound) to \(range.upperBound)") { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }
}

extension Declared where Value == Double {
    /// A number within `range` (fractions allowed).
    public static func number(_ name: String, _ placeholder: String, in range: ClosedRange<Double>, default value: Double,
                              help: String) -> Declared {
        Declared(name, placeholder, default: value, help: help + " (default \(value.shortText))",
                 expected: "a number from \(range.lowerBound.shortText) to \(range.upperBound.shortText)") { text in
            Double(text).flatMap { range.contains($0) ? $0 : nil }
        }
    }

    /// A duration in seconds, above 0 and at most a day.
    public static func seconds(_ name: String, default value: Double, help: String) -> Declared {
        Declared(name, "S", default: value, help: help + " (default \(value.shortText) s)",
                 expected: "a number of seconds above 0") { text in
            Double(text).flatMap { $0 > 0 && $0 <= 86_400 ? $0 : nil }
        }
    }
}

extension Declared where Value == String? {
    /// Any text, nil when the option is absent.
    public static func text(_ name: String, _ placeholder: String, help: String) -> Declared {
        Declared(name, placeholder, default: nil, help: help, expected: "") { Optional($0) }
    }
}

extension Declared where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of an enumeration's cases, by its raw value.
    public static func choice(_ name: String, _ placeholder: String, default value: Value, help: String) -> Declared {
        let names = Value.allCases.map(\.rawValue).joined(separator: ", ")
        return Declared(name, placeholder, default: value, help: help + " (\(names); default \(value.rawValue))",
                        expected: "one of \(names)", values: Value.allCases.map(\.rawValue)) { Value(rawValue: $0) }
    }
}

extension Double {
    /// 30 rather than 30.0; 0.5 stays 0.5.
    var shortText: String { self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self) }
}
