/// Decoding of the memory ops (protocol.md, "Memories and photos"): presence and types of the
/// arguments, with a `bad_request` naming the field. Lengths, dates and coordinate ranges are
/// the core's rules (`MemoryRules`), checked there.
extension RequestDecoder {
    static func memoryCreate(_ arguments: RequestArguments) throws(RequestError) -> Operation {
        let fields = try memoryFields(arguments)
        guard fields.title != nil else { throw arguments.badRequest("title is required") }
        guard fields.date != nil else { throw arguments.badRequest("date is required") }
        return .memoryCreate(fields)
    }

    static func memoryUpdate(_ arguments: RequestArguments) throws(RequestError) -> Operation {
        let memory = try memoryIdentifier(arguments, "memory")
        let fields = try memoryFields(arguments)
        guard fields.title != nil || fields.date != nil || fields.placeName != nil || fields.position != .absent else {
            throw arguments.badRequest("give at least one of title, date, place_name, position")
        }
        return .memoryUpdate(memory: memory, fields)
    }

    static func pointAdd(_ arguments: RequestArguments) throws(RequestError) -> Operation {
        let memory = try memoryIdentifier(arguments, "memory")
        let fields = try memoryPointFields(arguments)
        guard fields.time != nil else { throw arguments.badRequest("time is required") }
        return .pointAdd(memory: memory, fields)
    }

    static func pointUpdate(_ arguments: RequestArguments) throws(RequestError) -> Operation {
        let memory = try memoryIdentifier(arguments, "memory")
        let point = try memoryIdentifier(arguments, "point")
        let fields = try memoryPointFields(arguments)
        guard fields.time != nil || fields.position != .absent || fields.placeName != nil || fields.note != nil || fields.photos != nil else {
            throw arguments.badRequest("give at least one of time, position, place_name, note, photos")
        }
        return .pointUpdate(memory: memory, point: point, fields)
    }

    /// A memory or point id: a positive integer.
    static func memoryIdentifier(_ arguments: RequestArguments, _ name: StaticString) throws(RequestError) -> UInt64 {
        guard let value = arguments.value(name) else { throw arguments.badRequest("\(name) is required") }
        guard let id = value.uint64Value, id > 0 else { throw arguments.badRequest("\(name) must be a positive integer") }
        return id
    }

    private static func memoryFields(_ arguments: RequestArguments) throws(RequestError) -> MemoryArguments {
        MemoryArguments(
            title: try arguments.optionalString("title"),
            date: try arguments.optionalString("date"),
            placeName: try arguments.optionalString("place_name"),
            position: try memoryPosition(arguments))
    }

    private static func memoryPointFields(_ arguments: RequestArguments) throws(RequestError) -> MemoryPointArguments {
        var time: Int64?
        if let value = arguments.value("time"), value != .null {
            guard let milliseconds = value.int64Value else { throw arguments.badRequest("time must be an integer (milliseconds since 1970)") }
            time = milliseconds
        }
        var photos: [String]?
        if let value = arguments.value("photos"), value != .null {
            guard case .array(let elements) = value else { throw arguments.badRequest("photos must be an array of photo hashes") }
            var hashes: [String] = []
            for element in elements {
                guard case .string(let hash) = element else { throw arguments.badRequest("photos must be an array of photo hashes") }
                hashes.append(hash)
            }
            photos = hashes
        }
        return MemoryPointArguments(
            time: time, position: try memoryPosition(arguments), placeName: try arguments.optionalString("place_name"),
            note: try arguments.optionalString("note"), photos: photos)
    }

    /// `position`: `{"lat": number, "lon": number}`, `null`, or absent.
    private static func memoryPosition(_ arguments: RequestArguments) throws(RequestError) -> MemoryPositionArgument {
        guard let value = arguments.value("position") else { return .absent }
        if value == .null { return .null }
        guard case .object(let members) = value else { throw arguments.badRequest("position must be an object {\"lat\": …, \"lon\": …}") }
        let coordinates = RequestArguments(members: members, id: arguments.id)
        return .coordinates(latitude: try memoryDegrees(coordinates, "lat", arguments), longitude: try memoryDegrees(coordinates, "lon", arguments))
    }

    private static func memoryDegrees(_ coordinates: RequestArguments, _ name: StaticString, _ arguments: RequestArguments) throws(RequestError) -> Double {
        guard let value = coordinates.value(name) else { throw arguments.badRequest("position.\(name) is required") }
        // A JSON number's literal always parses; one too large to be finite becomes infinity,
        // which the core's range check refuses.
        guard case .number(let literal) = value, let degrees = Double(literal) else {
            throw arguments.badRequest("position.\(name) must be a number")
        }
        return degrees
    }
}
