import HuddleProtocol
import Testing

/// protocol.md "Memories and photos": the memory ops' arguments decoded, and every missing or
/// mistyped argument refused with a `bad_request` that names it.
@Suite struct MemoryRequestDecoderTests {
    static func decode(_ json: String) -> Result<ClientRequest, RequestError> {
        RequestDecoder.decode(Array(json.utf8), limits: ProtocolLimits())
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var json: String
        var operation: Operation
        var testDescription: String { json }
    }

    static let decoded: [Case] = [
        Case(json: #"{"id":"1","op":"memory_create","title":"Lisbon","date":"2025-06-14"}"#,
             operation: .memoryCreate(MemoryArguments(title: "Lisbon", date: "2025-06-14"))),
        Case(json: #"{"id":"1","op":"memory_create","title":"t","date":"d","place_name":"Alfama","position":{"lat":38.7223,"lon":-9.1393}}"#,
             operation: .memoryCreate(MemoryArguments(title: "t", date: "d", placeName: "Alfama", position: .coordinates(latitude: 38.7223, longitude: -9.1393)))),
        Case(json: #"{"id":"1","op":"memory_create","title":"t","date":"d","position":null,"place_name":null}"#,
             operation: .memoryCreate(MemoryArguments(title: "t", date: "d", position: .null))),
        // Out of range is the core's to refuse; the decoder passes the numbers on.
        Case(json: #"{"id":"1","op":"memory_create","title":"t","date":"d","position":{"lon":1e400,"lat":-91}}"#,
             operation: .memoryCreate(MemoryArguments(title: "t", date: "d", position: .coordinates(latitude: -91, longitude: .infinity)))),
        Case(json: #"{"id":"1","op":"memory_update","memory":7,"position":null}"#,
             operation: .memoryUpdate(memory: 7, MemoryArguments(position: .null))),
        Case(json: #"{"id":"1","op":"memory_update","memory":7,"title":"new","place_name":""}"#,
             operation: .memoryUpdate(memory: 7, MemoryArguments(title: "new", placeName: ""))),
        Case(json: #"{"id":"1","op":"memory_delete","memory":7}"#, operation: .memoryDelete(memory: 7)),
        Case(json: #"{"id":"1","op":"memories"}"#, operation: .memories),
        Case(json: #"{"id":"1","op":"memory","memory":18446744073709551615}"#, operation: .memory(memory: UInt64.max)),
        Case(json: #"{"id":"1","op":"point_add","memory":7,"time":-1000}"#,
             operation: .pointAdd(memory: 7, MemoryPointArguments(time: -1000))),
        Case(json: #"{"id":"1","op":"point_add","memory":7,"time":1763712000000,"position":{"lat":0,"lon":0},"place_name":"p","note":"n","photos":["a","b"]}"#,
             operation: .pointAdd(memory: 7, MemoryPointArguments(
                time: 1763712000000, position: .coordinates(latitude: 0, longitude: 0), placeName: "p", note: "n", photos: ["a", "b"]))),
        Case(json: #"{"id":"1","op":"point_update","memory":7,"point":2,"photos":[]}"#,
             operation: .pointUpdate(memory: 7, point: 2, MemoryPointArguments(photos: []))),
        Case(json: #"{"id":"1","op":"point_update","memory":7,"point":2,"position":null}"#,
             operation: .pointUpdate(memory: 7, point: 2, MemoryPointArguments(position: .null))),
        Case(json: #"{"id":"1","op":"point_delete","memory":7,"point":2}"#, operation: .pointDelete(memory: 7, point: 2)),
    ]

    @Test(arguments: decoded) func decodes(_ expected: Case) throws {
        let request = try Self.decode(expected.json).get()
        #expect(request.operation == expected.operation)
        #expect(expected.json.contains(#""op":"\#(request.operation.name)""#), "the name is the op as sent")
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var json: String
        var message: String
        var testDescription: String { json }
    }

    static let refused: [Refusal] = [
        Refusal(json: #"{"id":"1","op":"memory_create","date":"d"}"#, message: "title is required"),
        Refusal(json: #"{"id":"1","op":"memory_create","title":"t"}"#, message: "date is required"),
        Refusal(json: #"{"id":"1","op":"memory_create","title":5,"date":"d"}"#, message: "title must be a string"),
        Refusal(json: #"{"id":"1","op":"memory_create","title":"t","date":"d","place_name":[]}"#, message: "place_name must be a string"),
        Refusal(json: #"{"id":"1","op":"memory_create","title":"t","date":"d","position":[1,2]}"#, message: #"position must be an object {"lat": …, "lon": …}"#),
        Refusal(json: #"{"id":"1","op":"memory_create","title":"t","date":"d","position":{"lat":1}}"#, message: "position.lon is required"),
        Refusal(json: #"{"id":"1","op":"memory_create","title":"t","date":"d","position":{"lat":"1","lon":2}}"#, message: "position.lat must be a number"),
        Refusal(json: #"{"id":"1","op":"memory_update","title":"t"}"#, message: "memory is required"),
        Refusal(json: #"{"id":"1","op":"memory_update","memory":7}"#, message: "give at least one of title, date, place_name, position"),
        Refusal(json: #"{"id":"1","op":"memory_update","memory":0,"title":"t"}"#, message: "memory must be a positive integer"),
        Refusal(json: #"{"id":"1","op":"memory_delete","memory":"7"}"#, message: "memory must be a positive integer"),
        Refusal(json: #"{"id":"1","op":"memory","memory":1.5}"#, message: "memory must be a positive integer"),
        Refusal(json: #"{"id":"1","op":"point_add","memory":7}"#, message: "time is required"),
        Refusal(json: #"{"id":"1","op":"point_add","memory":7,"time":1.5}"#, message: "time must be an integer (milliseconds since 1970)"),
        Refusal(json: #"{"id":"1","op":"point_add","memory":7,"time":1,"photos":"abc"}"#, message: "photos must be an array of photo hashes"),
        Refusal(json: #"{"id":"1","op":"point_add","memory":7,"time":1,"photos":[1]}"#, message: "photos must be an array of photo hashes"),
        Refusal(json: #"{"id":"1","op":"point_add","memory":7,"time":1,"note":false}"#, message: "note must be a string"),
        Refusal(json: #"{"id":"1","op":"point_update","memory":7,"note":"n"}"#, message: "point is required"),
        Refusal(json: #"{"id":"1","op":"point_update","memory":7,"point":1}"#, message: "give at least one of time, position, place_name, note, photos"),
        Refusal(json: #"{"id":"1","op":"point_delete","point":1}"#, message: "memory is required"),
    ]

    @Test(arguments: refused) func refuses(_ refusal: Refusal) {
        guard case .failure(let error) = Self.decode(refusal.json) else {
            Issue.record("decoded: \(refusal.json)")
            return
        }
        #expect(error.code == "bad_request")
        #expect(error.message == refusal.message)
        #expect(error.id == "1")
    }

    @Test func theEventCarriesWhatChangedInOrder() {
        let memory = Memory(id: 7, title: "t", date: "2025-06-14", createdAt: 1, updatedAt: 2, pointCount: 0)
        let event = MemoryChange.pointDeleted(memory, point: 2).event(time: 5)
        #expect(JSONWriter.serialize(event)
            == #"{"event":"memory_changed","action":"point_deleted","memory_id":7,"memory":{"id":7,"title":"t","date":"2025-06-14","place_name":"","position":null,"created_at":1,"updated_at":2,"point_count":0},"point_id":2,"time":5}"#)
        let deleted = MemoryChange.deleted(memory: 7).event(time: 5)
        #expect(JSONWriter.serialize(deleted) == #"{"event":"memory_changed","action":"deleted","memory_id":7,"time":5}"#)
    }
}
