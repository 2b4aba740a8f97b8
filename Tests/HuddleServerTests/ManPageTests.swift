import ChildProcessExit
import Foundation
import Testing

/// `docs/huddle.1` (issue 18) cannot drift from the binary: every flag and data command the
/// help lists is in the man page, and every flag and `HUDDLE_*` variable the man page names
/// exists. Read as text, so the test needs no `man`.
@Suite("Man page", .ownThread)
struct ManPageTests {
    static let manPage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/huddle.1")

    /// The page's text with roff's escaped hyphens (`\-`) as plain ones.
    static func manText() throws -> String {
        try String(contentsOf: manPage, encoding: .utf8).replacingOccurrences(of: "\\-", with: "-")
    }

    static func help(_ arguments: [String]) throws -> String {
        let result = try runChildToCompletion(ServerProcess.binary.path, arguments, timeout: 30)
        guard result.status == 0 else { throw TestFailure("huddle \(arguments.joined(separator: " ")) exited \(result.status): \(result.output)") }
        return result.output
    }

    static func flags(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "--[a-z][a-z0-9-]*[a-z0-9]")
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).map { String(text[Range($0.range, in: text)!]) })
    }

    @Test("every flag of huddle serve --help and of the data commands is in docs/huddle.1")
    func everyHelpFlagIsDocumented() throws {
        let page = try Self.manText()
        #expect(page.hasPrefix(".\\\"") || page.hasPrefix(".TH"), "a roff page")
        #expect(page.contains(".TH HUDDLE 1 "))
        let serveFlags = Self.flags(in: try Self.help(["serve", "--help"]))
        #expect(serveFlags.count > 40, "serve's flags were found in its help: \(serveFlags.sorted())")
        let documented = Self.flags(in: page)
        let missing = serveFlags.subtracting(documented)
        #expect(missing.isEmpty, "in huddle serve --help but not in docs/huddle.1: \(missing.sorted())")
        for command in ["verify", "inspect", "backup"] {
            #expect(page.contains("huddle data \(command)"), "huddle data \(command) is not in the man page")
            let commandFlags = Self.flags(in: try Self.help(["data", command, "--help"]))
            #expect(commandFlags.subtracting(documented).isEmpty,
                    "huddle data \(command) flags missing: \(commandFlags.subtracting(documented).sorted())")
        }
    }

    @Test("every flag and HUDDLE_* variable docs/huddle.1 names exists")
    func everyDocumentedNameExists() throws {
        let page = try Self.manText()
        var known = Self.flags(in: try Self.help(["--help"]))
        for command in ["verify", "inspect", "backup"] { known.formUnion(Self.flags(in: try Self.help(["data", command, "--help"]))) }
        let unknown = Self.flags(in: page).subtracting(known)
        #expect(unknown.isEmpty, "docs/huddle.1 names flags huddle does not have: \(unknown.sorted())")

        let variable = try NSRegularExpression(pattern: "HUDDLE_[A-Z][A-Z_]*[A-Z]")
        let variables = Set(variable.matches(in: page, range: NSRange(page.startIndex..., in: page)).map { String(page[Range($0.range, in: page)!]) })
        #expect(!variables.isEmpty)
        for name in variables where name != "HUDDLE_CONFIG" {
            let flag = "--" + name.dropFirst("HUDDLE_".count).lowercased().replacingOccurrences(of: "_", with: "-")
            #expect(known.contains(flag), "\(name) names \(flag), which huddle serve does not have")
        }
    }
}
