import Foundation

/// Places and location helpers for protocol tests (protocol.md, "Places and location").
extension ProtocolClient {
    /// Creates a place; returns its id.
    @discardableResult
    func setPlace(_ label: String, latitude: Double, longitude: Double, radius: Double) throws -> Int {
        let result = try ok("place_set", ["label": label, "lat": latitude, "lon": longitude, "radius": radius])
        guard let id = JSON.int((result["place"] as? JSONObject)?["id"]) else { throw TestFailure("place_set gave no id: \(JSON.text(result))") }
        return id
    }

    /// Makes `count` place changes on `loc:USER` as `token`'s user by region events for its
    /// place `placeID`: change number k (from `first`) enters the place when k is even and leaves
    /// it when odd, reported at `baseTime + k`. The user must be elsewhere before change 0.
    /// Spread over fresh connections so none goes past its burst of requests.
    static func placeChanges(placeID: Int, count: Int, first: Int = 0, baseTime: Int, token: String, port: Int) throws {
        let perConnection = 90
        var next = first
        while next < first + count {
            let client = try ProtocolClient(port: port, credential: .header(token))
            let n = min(perConnection, first + count - next)
            let replies = try client.pipeline((next..<next + n).map { k in
                ("region", ["place_id": placeID, "event": k % 2 == 0 ? "enter" : "exit", "time": baseTime + k])
            })
            for reply in replies {
                guard JSON.bool(reply["ok"]) == true, JSON.bool((reply["result"] as? JSONObject)?["changed"]) == true else {
                    throw TestFailure("a region event changed nothing: \(JSON.text(reply))")
                }
            }
            next += n
        }
    }
}
