import ArgumentParser
import HuddleStore

/// `huddle data …`: look at a data directory without starting the server.
struct DataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "data",
        abstract: "Check or describe a data directory (never modifies it).",
        subcommands: [Verify.self, Inspect.self]
    )

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every snapshot and log record; exit 0 when sound, 1 with what is wrong."
        )
        @Option(help: "The data directory.") var dataDir: String = "huddle-data"

        func run() throws {
            let report = DataDirectoryCheck.verify(directory: dataDir)
            print(report)
            if !report.isSound { throw ExitCode(1) }
        }
    }

    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sizes, record counts, sequence positions and the last snapshot's time."
        )
        @Option(help: "The data directory.") var dataDir: String = "huddle-data"

        func run() throws {
            print(DataDirectoryCheck.inspect(directory: dataDir))
        }
    }
}
