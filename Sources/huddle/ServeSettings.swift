import ArgumentParser
import Glibc
import HuddleIO
import HuddleProtocol

/// `huddle serve`'s settings from a config file and the environment, besides the command line:
/// precedence flags > `HUDDLE_*` environment > config file > built-in default.
///
/// The settings are serve's own flags, found by reflecting a parsed `Serve` — no second list to
/// keep in step, so a flag added later is settable everywhere at once. The config file is a
/// JSON object whose keys are the flag names without `--` (`"tls-port": 8443`); the variable
/// for `--tls-port` is `HUDDLE_TLS_PORT`. Both become ordinary arguments placed before the
/// command line's, and ArgumentParser keeps the last value given, which is the precedence.
enum ServeSettings {
    struct Setting {
        /// The flag without `--`.
        var name: String
        /// A switch (`--bench`, `--compression`/`--no-compression`) rather than an option.
        var isSwitch: Bool
        /// For a switch: on unless turned off, so off is spelled `--no-NAME`.
        var defaultOn: Bool

        var environmentName: String { "HUDDLE_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 }) }
    }

    /// Never shown by `--print-config`, only whether they are set.
    static let secrets: Set<String> = ["api-key", "push-webhook-secret", "metrics-token", "app-token-secret", "password-reset-webhook-secret"]
    /// About where settings come from, not settings themselves.
    static let sourceFlags: Set<String> = ["config", "print-config"]

    static func settings() throws -> [Setting] {
        try reflectedValues(of: Serve.parse([])).compactMap { name, kind, value in
            guard !sourceFlags.contains(name) else { return nil }
            return Setting(name: name, isSwitch: kind == .switch, defaultOn: value as? Bool == true)
        }
    }

    /// The arguments for serve: the config file's and the environment's settings, then `commandLine`.
    static func arguments(commandLine: [String]) throws -> [String] {
        let settings = try settings()
        var chosen: [String: String] = [:]
        if let path = configPath(commandLine) ?? environmentValue("HUDDLE_CONFIG") {
            for (name, value) in try fileValues(path: path, settings: settings) { chosen[name] = value }
        }
        for setting in settings {
            if let value = environmentValue(setting.environmentName) {
                if setting.isSwitch, !["true", "false", "1", "0"].contains(value) {
                    throw ValidationError("\(setting.environmentName) must be true or false, not \"\(value)\"")
                }
                chosen[setting.name] = value
            }
        }
        var arguments: [String] = []
        for setting in settings {
            guard let value = chosen[setting.name] else { continue }
            if setting.isSwitch {
                let on = value == "true" || value == "1"
                if on != setting.defaultOn { arguments.append(on ? "--\(setting.name)" : "--no-\(setting.name)") }
            } else {
                arguments.append("--\(setting.name)=\(value)")
            }
        }
        return arguments + commandLine
    }

    /// `--config PATH` or `--config=PATH` on the command line.
    private static func configPath(_ commandLine: [String]) -> String? {
        for (index, argument) in commandLine.enumerated() {
            if argument == "--config", index + 1 < commandLine.count { return commandLine[index + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
        }
        return nil
    }

    private static func fileValues(path: String, settings: [Setting]) throws -> [(String, String)] {
        guard let bytes = WholeFile.read(path, limit: 1 << 20) else {
            throw ValidationError("--config: cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes, maxDepth: 4)
        } catch {
            throw ValidationError("--config \(path) is not valid JSON: \(error)")
        }
        guard case .object(let members) = document else {
            throw ValidationError("--config \(path) must hold one JSON object of settings, like {\"port\": 8080}")
        }
        var values: [(String, String)] = []
        for (name, value) in members {
            guard let setting = settings.first(where: { $0.name == name }) else {
                throw ValidationError("--config \(path): unknown setting \"\(name)\" (the settings are the flags of huddle serve --help, without --)")
            }
            switch (value, setting.isSwitch) {
            case (.bool(let on), true): values.append((name, on ? "true" : "false"))
            case (.string(let text), false): values.append((name, text))
            case (.number(let literal), false): values.append((name, literal))
            default:
                throw ValidationError("--config \(path): \"\(name)\" must be \(setting.isSwitch ? "true or false" : "a string or a number")")
            }
        }
        return values
    }

    /// The effective settings as a config file (JSON, one setting a line), secrets masked.
    static func describe(_ serve: Serve) -> String {
        let lines = reflectedValues(of: serve).compactMap { name, _, value -> String? in
            guard !sourceFlags.contains(name) else { return nil }
            let shown: JSONValue
            switch value {
            case nil: return nil
            case _ where secrets.contains(name): shown = .string("********")
            case let flag as Bool: shown = .bool(flag)
            case let number as Int: shown = .integer(number)
            case let number as Double: shown = .number(number == number.rounded() ? String(Int(number)) : String(number))
            case let text as String: shown = .string(text)
            case let texts as [String]: shown = .array(texts.map(JSONValue.string))
            case let other?: shown = .string("\(other)")
            }
            return "  " + JSONWriter.serialize(.string(name)) + ": " + JSONWriter.serialize(shown)
        }
        return "{\n" + lines.joined(separator: ",\n") + "\n}"
    }

    enum Kind { case option, `switch` }

    /// Serve's declared flags in order: name, kind and parsed value (nil for an unset optional).
    /// ArgumentParser keeps each parsed value in the property wrapper's `_parsedValue`
    /// (`.value(V)`); reflection reads it without naming ArgumentParser's internal types.
    private static func reflectedValues(of serve: Serve) -> [(String, Kind, Any?)] {
        Mirror(reflecting: serve).children.compactMap { child in
            guard let label = child.label, label.hasPrefix("_") else { return nil }
            let typeName = String(describing: type(of: child.value))
            let kind: Kind
            if typeName.hasPrefix("Flag<") { kind = .switch } else if typeName.hasPrefix("Option<") { kind = .option } else { return nil }
            guard let parsed = Mirror(reflecting: child.value).children.first?.value,
                  let value = Mirror(reflecting: parsed).children.first?.value else { return nil }
            return (flagName(String(label.dropFirst())), kind, unwrapped(value))
        }
    }

    private static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.map { unwrapped($0.value) } ?? nil
    }

    /// ArgumentParser's own naming: `sessionTTL` → `session-ttl`, `pushWebhookCa` → `push-webhook-ca`.
    static func flagName(_ property: String) -> String {
        let characters = Array(property)
        var name = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previousLower = characters[index - 1].isLowercase || characters[index - 1].isNumber
                let acronymEnds = characters[index - 1].isUppercase && index + 1 < characters.count && characters[index + 1].isLowercase
                if previousLower || acronymEnds { name.append("-") }
            }
            name.append(Character(character.lowercased()))
        }
        return name
    }

    private static func environmentValue(_ name: String) -> String? { ProcessEnvironment.value(name) }
}
