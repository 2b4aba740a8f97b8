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
            abstract: "Check every snapshot and log record and say what start-up would do.",
            discussion: """
                Exit status: 0 sound (start-up loads the newest snapshot and the log); 2 recoverable \
                (start-up passes over damaged snapshots and loads an older one plus the log after it; \
                nothing is lost); 1 start-up refuses (what is wrong is listed).
                """
        )
        @Option(help: "The data directory.") var dataDir: String = "huddle-data"

        func run() throws {
            let report = DataDirectoryCheck.verify(directory: dataDir)
            print(report)
            switch report.outcome {
            case .sound: break
            case .startsFromOlderSnapshot: throw ExitCode(2)
            case .refused: throw ExitCode(1)
            }
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
