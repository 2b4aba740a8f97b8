import HuddleProtocol
import Testing

/// Decoding of the places and location ops (protocol.md, "Places and location"): numbers as
/// `Double`s whatever their spelling, place ids and times as integers, and precise
/// `bad_request`s. Ranges are the core's to judge, so an out-of-range latitude decodes.
@Suite struct PlacesRequestDecoderTests {
    typealias Decoded = RequestDecoderTests.Decoded
    typealias Refused = RequestDecoderTests.Refused

    static let decoded: [Decoded] = [
        Decoded(json: #"{"id":"1","op":"place_set","label":"home","lat":48.8566,"lon":2.3522,"radius":100}"#,
                operation: .placeSet(id: nil, label: "home", latitude: 48.8566, longitude: 2.3522, radius: 100)),
        Decoded(json: #"{"id":"1","op":"place_set","place_id":3,"label":"x","lat":-9e1,"lon":-180,"radius":1.5E4}"#,
                operation: .placeSet(id: 3, label: "x", latitude: -90, longitude: -180, radius: 15_000)),
        Decoded(json: #"{"id":"1","op":"place_set","place_id":null,"label":"x","lat":91,"lon":0,"radius":10}"#,
                operation: .placeSet(id: nil, label: "x", latitude: 91, longitude: 0, radius: 10)),
        Decoded(json: #"{"id":"1","op":"place_remove","place_id":7}"#, operation: .placeRemove(id: 7)),
        Decoded(json: #"{"id":"1","op":"places"}"#, operation: .places(user: nil)),
        Decoded(json: #"{"id":"1","op":"places","user":"Alice"}"#, operation: .places(user: "Alice")),
        Decoded(json: #"{"id":"1","op":"location_fix","lat":48.85661,"lon":2.35222,"accuracy":12.5,"time":1763712000000}"#,
                operation: .locationFix(latitude: 48.85661, longitude: 2.35222, accuracy: 12.5, time: 1_763_712_000_000)),
        Decoded(json: #"{"id":"1","op":"region","place_id":2,"event":"enter","time":0}"#, operation: .region(placeID: 2, entered: true, time: 0)),
        Decoded(json: #"{"id":"1","op":"region","place_id":2,"event":"exit","time":5}"#, operation: .region(placeID: 2, entered: false, time: 5)),
        Decoded(json: #"{"id":"1","op":"where","user":"bob"}"#, operation: .whereIs(user: "bob")),
    ]

    @Test(arguments: decoded)
    func decodesEveryOp(_ sample: Decoded) throws {
        #expect(try RequestDecoderTests.decode(sample.json).get() == ClientRequest(id: "1", operation: sample.operation))
        let op = try #require(JSONParser.parse(Array(sample.json.utf8), maxDepth: 32)["op"]?.stringValue)
        #expect(sample.operation.name == op)
    }

    /// A literal beyond `Double`'s range decodes to an infinity, for the core to refuse.
    @Test func aHugeNumberIsAnInfinity() throws {
        let request = try RequestDecoderTests.decode(#"{"id":"1","op":"location_fix","lat":1e999,"lon":0,"accuracy":5,"time":1}"#).get()
        guard case .locationFix(let latitude, _, _, _) = request.operation else {
            Issue.record("\(request)")
            return
        }
        #expect(latitude == .infinity)
    }

    static let refused: [Refused] = [
        Refused(#"{"id":"1","op":"place_set","lat":1,"lon":2,"radius":10}"#, "1", "bad_request", "label is required"),
        Refused(#"{"id":"1","op":"place_set","label":"x","lon":2,"radius":10}"#, "1", "bad_request", "lat is required"),
        Refused(#"{"id":"1","op":"place_set","label":"x","lat":"48.8","lon":2,"radius":10}"#, "1", "bad_request", "lat must be a number"),
        Refused(#"{"id":"1","op":"place_set","label":"x","lat":1,"lon":null,"radius":10}"#, "1", "bad_request", "lon must be a number"),
        Refused(#"{"id":"1","op":"place_set","label":"x","lat":1,"lon":2}"#, "1", "bad_request", "radius is required"),
        Refused(#"{"id":"1","op":"place_set","place_id":0,"label":"x","lat":1,"lon":2,"radius":10}"#, "1", "bad_request", "place_id must be a positive integer"),
        Refused(#"{"id":"1","op":"place_set","place_id":1.5,"label":"x","lat":1,"lon":2,"radius":10}"#, "1", "bad_request", "place_id must be a positive integer"),
        Refused(#"{"id":"1","op":"place_remove"}"#, "1", "bad_request", "place_id is required"),
        Refused(#"{"id":"1","op":"place_remove","place_id":"2"}"#, "1", "bad_request", "place_id must be a positive integer"),
        Refused(#"{"id":"1","op":"places","user":5}"#, "1", "bad_request", "user must be a string"),
        Refused(#"{"id":"1","op":"location_fix","lat":1,"lon":2,"time":1}"#, "1", "bad_request", "accuracy is required"),
        Refused(#"{"id":"1","op":"location_fix","lat":1,"lon":2,"accuracy":true,"time":1}"#, "1", "bad_request", "accuracy must be a number"),
        Refused(#"{"id":"1","op":"location_fix","lat":1,"lon":2,"accuracy":5}"#, "1", "bad_request", "time is required"),
        Refused(#"{"id":"1","op":"location_fix","lat":1,"lon":2,"accuracy":5,"time":-1}"#, "1", "bad_request",
                "time must be a non-negative integer (milliseconds since the Unix epoch)"),
        Refused(#"{"id":"1","op":"location_fix","lat":1,"lon":2,"accuracy":5,"time":1.5e12}"#, "1", "bad_request",
                "time must be a non-negative integer (milliseconds since the Unix epoch)"),
        Refused(#"{"id":"1","op":"region","place_id":1,"event":"arrive","time":1}"#, "1", "bad_request", #"event must be "enter" or "exit""#),
        Refused(#"{"id":"1","op":"region","place_id":1,"time":1}"#, "1", "bad_request", "event is required"),
        Refused(#"{"id":"1","op":"region","event":"enter","time":1}"#, "1", "bad_request", "place_id is required"),
        Refused(#"{"id":"1","op":"where"}"#, "1", "bad_request", "user is required"),
    ]

    @Test(arguments: refused)
    func refusesWithAPreciseError(_ sample: Refused) {
        #expect(RequestDecoderTests.decode(sample.json) == .failure(sample.error))
    }

    @Test func doublesGoOutAsTheShortestLiteral() {
        #expect(JSONValue.double(48.8566) == .number("48.8566"))
        #expect(JSONValue.double(100) == .number("100.0"))
        #expect(JSONValue.double(-0.00001) == .number("-1e-05"))
        #expect(JSONValue.double(.infinity) == .null && JSONValue.double(.nan) == .null)
        #expect(JSONValue.number("1e-05").doubleValue == 0.00001)
        #expect(JSONValue.string("1").doubleValue == nil)
    }
}
