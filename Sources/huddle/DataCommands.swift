import ArgumentParser
import HuddleStore

/// `huddle data …`: look at a data directory without starting the server.
struct DataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "data",
        abstract: "Check, describe or back up a data directory (never modifies it).",
        subcommands: [Verify.self, Inspect.self, Backup.self]
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

    struct Backup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a data directory, even while its server runs, into a new directory that starts as is.",
            discussion: """
                The copy holds every write acknowledged before the backup began (the newest snapshot \
                and the log after it; a record being written during the copy is cut at start-up, as \
                after a crash). Restore: stop the server, `huddle data verify --data-dir BACKUP`, then \
                start it with `--data-dir BACKUP` (or move BACKUP into place).
                """
        )
        @Option(help: "The data directory to copy.") var dataDir: String = "huddle-data"
        @Option(help: "Where the copy goes: a new or empty directory.") var to: String

        func run() throws {
            let result = try DataDirectoryBackup.copy(from: dataDir, to: to)
            print("backed up \(dataDir) to \(to): snapshot \(result.snapshot ?? "none"), \(result.segments.count) log segment(s), \(result.photos) photo(s), \(result.bytes) bytes")
            let report = DataDirectoryCheck.verify(directory: to)
            guard report.outcome != .refused else {
                print(report)
                throw ExitCode(1)
            }
        }
    }
}
