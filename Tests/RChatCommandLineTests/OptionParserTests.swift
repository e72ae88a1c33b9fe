import RChatCommandLine
import XCTest

final class OptionParserTests: XCTestCase {
    enum Color: String, CaseIterable, Sendable { case red, green }

    static let count = Declared.integer("--count", in: 1...10, default: 3, help: "how many")
    static let ratio = Declared.number("--ratio", "R", in: 0...1, default: 0.5, help: "a share")
    static let wait = Declared.seconds("--wait", default: 30, help: "how long")
    static let name = Declared<String?>.text("--name", "NAME", help: "who")
    static let color = Declared.choice("--color", "COLOR", default: Color.red, help: "which")
    static let json = Option.flag("--json", aliases: ["-j"], help: "machine-readable")
    static let parser = OptionParser([count.option, ratio.option, wait.option, name.option, color.option, json],
                                     helpHint: "tool --help")

    private func refusal(_ words: [String], _ parser: OptionParser = parser) -> String? {
        do { _ = try parser.parse(words); return nil } catch { return error.description }
    }

    func testTypedValuesAndDefaults() throws {
        let none = try Self.parser.parse([])
        XCTAssertEqual(none[Self.count], 3)
        XCTAssertEqual(none[Self.ratio], 0.5)
        XCTAssertEqual(none[Self.wait], 30)
        XCTAssertNil(none[Self.name])
        XCTAssertEqual(none[Self.color], .red)
        XCTAssertFalse(none.has(Self.json))

        let given = try Self.parser.parse(["--count", "7", "--ratio=0.25", "--wait", "1.5", "--name", "Sam", "--color", "green", "-j"])
        XCTAssertEqual(given[Self.count], 7)
        XCTAssertEqual(given[Self.ratio], 0.25)
        XCTAssertEqual(given[Self.wait], 1.5)
        XCTAssertEqual(given[Self.name], "Sam")
        XCTAssertEqual(given[Self.color], .green)
        XCTAssertTrue(given.has(Self.json), "an alias sets the option under its own name")
        // The last of a repeated option wins.
        XCTAssertEqual(try Self.parser.parse(["--count", "2", "--count", "9"])[Self.count], 9)
    }

    func testValuesOfTheWrongTypeOrRangeAreRefusedWithWhatIsExpected() {
        XCTAssertEqual(refusal(["--count", "x"]), "--count must be a whole number from 1 to 10, not \"x\"")
        XCTAssertEqual(refusal(["--count", "11"]), "--count must be a whole number from 1 to 10, not \"11\"")
        XCTAssertEqual(refusal(["--ratio", "2"]), "--ratio must be a number from 0 to 1, not \"2\"")
        XCTAssertEqual(refusal(["--wait", "0"]), "--wait must be a number of seconds above 0, not \"0\"")
        XCTAssertEqual(refusal(["--wait", "-1"]), "--wait must be a number of seconds above 0, not \"-1\"")
        XCTAssertEqual(refusal(["--color", "blue"]), "--color must be one of red, green, not \"blue\"")
    }

    func testUnknownOptionsAndMissingValuesAreRefused() {
        XCTAssertEqual(refusal(["--bogus"]), "unknown option \"--bogus\" (see tool --help)")
        XCTAssertEqual(refusal(["--bogus=1"]), "unknown option \"--bogus=1\" (see tool --help)")
        XCTAssertEqual(refusal(["--count"]), "--count needs a value")
        XCTAssertEqual(refusal(["--name", "A", "--count"]), "--count needs a value")
        XCTAssertEqual(refusal(["--json=yes"]), "--json takes no value")
    }

    func testPositionalsAmongOptionsAndAfterTheSeparator() throws {
        let parsed = try Self.parser.parse(["a", "--json", "b", "-", "--", "--count", "-j"])
        XCTAssertEqual(parsed.positionals, ["a", "b", "-", "--count", "-j"])
        XCTAssertTrue(parsed.has(Self.json))
        XCTAssertEqual(parsed[Self.count], 3, "--count after -- is a positional")
        XCTAssertEqual(try parsed.positional(1, "B"), "b")
        XCTAssertThrowsError(try parsed.positional(5, "SIXTH")) { XCTAssertEqual("\($0)", "missing SIXTH") }
        XCTAssertThrowsError(try parsed.expectPositionals(max: 2)) { XCTAssertEqual("\($0)", "unexpected argument \"-\"") }
    }

    /// What `rchat` does: global options up to the command word, then the command's own
    /// options and the global ones again, so they work on either side of the word.
    func testGlobalOptionsBeforeOrAfterTheCommandWord() throws {
        let home = Option.text("--home", "DIR", help: "where")
        let globals = OptionParser([home], helpHint: "prog --help")
        let command = OptionParser([home, Self.json], helpHint: "prog list --help")
        func run(_ words: [String]) throws -> (word: String?, arguments: ParsedArguments) {
            let (before, rest) = try globals.parse(words[...], stopAtPositional: true)
            return (rest.first, before.merging(try command.parse(rest.dropFirst()[...]).arguments))
        }
        for words in [["--home", "H", "list", "--json"], ["list", "--home", "H", "--json"], ["--home=H", "list", "--json"]] {
            let (word, arguments) = try run(words)
            XCTAssertEqual(word, "list", "\(words)")
            XCTAssertEqual(arguments.value("--home"), "H", "\(words)")
            XCTAssertTrue(arguments.has("--json"), "\(words)")
            XCTAssertEqual(arguments.positionals, [], "\(words)")
        }
        // After the word wins over before it.
        XCTAssertEqual(try run(["--home", "A", "list", "--home", "B"]).arguments.value("--home"), "B")
        // A command's own option is not global: before the word it is unknown.
        XCTAssertThrowsError(try run(["--json", "list"])) { XCTAssertEqual("\($0)", "unknown option \"--json\" (see prog --help)") }
        // The value of a global option is never taken for the command word.
        XCTAssertEqual(try run(["--home", "list", "other"]).word, "other")
    }

    func testHelpIsGeneratedFromTheDeclarations() {
        XCTAssertEqual(OptionHelp.list([Self.count.option, Self.json, Option.text("--home", "DIR", help: "first line\nsecond line")]), """
              --count N   how many (default 3)
              --json, -j  machine-readable
              --home DIR  first line
                          second line
            """)
        XCTAssertEqual(OptionHelp.list([Self.wait.option, Self.color.option]), """
              --wait S       how long (default 30 s)
              --color COLOR  which (red, green; default red)
            """)
        let usage = OptionHelp.usage("tool", required: [Self.name.option], optional: [Self.count.option, Self.ratio.option, Self.json], width: 40)
        XCTAssertEqual(usage, """
            usage: tool --name NAME [--count N]
                        [--ratio R] [--json]
            """)
    }
}
