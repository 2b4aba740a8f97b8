import Foundation

/// The scenario behind `Tests/HuddleServerTests/Data/log-format-0`: a data directory written by
/// the release whose log records were Swift's synthesized Codable (log format 0), holding every
/// kind of command a client can cause and a snapshot. `write` made it (see that directory's
/// README); `LegacyDataDirectoryTests` starts today's server on a copy of it.
///
/// Two runs: the first ends with SIGTERM (its shutdown snapshot covers it), the second with
/// SIGKILL, so a start replays the second run's records on top of the snapshot.
enum LegacyDataScenario {
    static let users = ["alice", "bob", "carol", "dave"]
    /// A photo alice uploaded and put on a memory's point.
    static let photo = PhotoRequest.photo(7, count: 2000)
    static var roomMessage: [String: Any] { ["text": "hi \"room\" \\ / ü", "n": 1] }

    static func write(to data: URL) async throws {
        let first = try await DurableServer.start(["--activities", "Coffee,Gym,Anything"], dataDirectory: data)
        try firstRun(port: first.port)
        guard try await first.stop() == 0 else { throw TestFailure("the first run did not exit cleanly:\n\(first.logText)") }
        let second = try await DurableServer.start(["--activities", "Coffee,Gym,Anything", "--snapshot-interval", "3600"], dataDirectory: data)
        try secondRun(port: second.port)
        second.kill9()
    }

    /// Accounts, sessions, friends, chat, the room, the feed, activities and matches, places and
    /// location, memories with a photo, and keyed writes (`client_id`).
    private static func firstRun(port: Int) throws {
        let alice = try V1Client(port: port)
        let bob = try V1Client(port: port)
        let carol = try V1Client(port: port)
        let dave = try V1Client(port: port)
        let token = try alice.signUp("alice")
        try bob.signUp("bob")
        try carol.signUp("carol")
        try dave.signUp("dave")
        let spare = try V1Client(port: port)
        try spare.logIn("alice")
        try spare.ok("logout")

        try alice.ok("friend_request", ["user": "bob", "message": "hi bob", "client_id": "fr-1"])
        try bob.ok("friend_accept", ["user": "alice"])
        try alice.ok("friend_request", ["user": "carol"])
        try carol.ok("friend_request", ["user": "alice"])
        try alice.ok("friend_request", ["user": "dave"])
        try dave.ok("friend_decline", ["user": "alice"])
        try dave.ok("friend_request", ["user": "bob"])
        try carol.ok("friend_request", ["user": "bob"])
        try carol.ok("friend_cancel", ["user": "bob"])

        try alice.ok("publish", ["channel": "chat:alice~bob", "data": ["text": "hello bob"]])
        try alice.ok("publish", ["channel": "chat:alice~bob", "data": ["text": "again"], "client_id": "m-2"])
        try bob.ok("mark_read", ["channel": "chat:alice~bob", "offset": 1])
        try alice.ok("publish", ["channel": "room:lobby", "data": roomMessage, "type": "note"])

        let post = try alice.ok("post", ["text": "coffee anyone?", "activity": "Coffee", "at": 1_900_000_000_000, "client_id": "p-1"])
        let postID = (post["post"] as? [String: Any])?["id"] as? Int ?? 0
        try bob.ok("like", ["post": postID, "liked": true])
        try bob.ok("comment", ["post": postID, "text": "me!", "client_id": "c-1"])
        let gone = try bob.ok("post", ["text": "to delete"])
        try bob.ok("post_delete", ["post": (gone["post"] as? [String: Any])?["id"] as? Int ?? 0])

        try alice.ok("activity_on", ["activity": "Coffee", "client_id": "a-1"])
        try bob.ok("activity_on", ["activity": "Coffee", "expires_in": 3600])
        try carol.ok("activity_on", ["activity": "Gym", "friends": ["alice"]])
        try alice.ok("activity_on", ["activity": "Gym"])
        try carol.ok("activity_off", ["activity": "Gym"])

        let home = try alice.ok("place_set", ["label": "Home", "lat": 51.5, "lon": -0.125, "radius": 100, "client_id": "pl-1"])
        let homeID = (home["place"] as? [String: Any])?["id"] as? Int ?? 0
        let work = try alice.ok("place_set", ["label": "Work", "lat": 51.52, "lon": -0.09, "radius": 150])
        try alice.ok("place_remove", ["place_id": (work["place"] as? [String: Any])?["id"] as? Int ?? 0])
        try alice.ok("location_fix", ["lat": 51.5, "lon": -0.125, "accuracy": 20, "time": 1_700_000_000_000])
        try alice.ok("region", ["place_id": homeID, "event": "exit", "time": 1_700_000_100_000])

        guard try PhotoRequest.upload(photo, token: token, port: port).status == 201 else { throw TestFailure("photo upload failed") }
        let memory = try alice.ok("memory_create", [
            "title": "Lisbon", "date": "2025-05-05", "place_name": "Alfama", "position": ["lat": 38.71, "lon": -9.13], "client_id": "mem-1",
        ])
        let memoryID = (memory["memory"] as? [String: Any])?["id"] as? Int ?? 0
        try alice.ok("memory_update", ["memory": memoryID, "title": "Lisbon trip"])
        try alice.ok("point_add", ["memory": memoryID, "time": 1_746_400_000_000, "note": "tram 28", "photos": [PhotoRequest.hash(photo)]])
        let second = try alice.ok("point_add", ["memory": memoryID, "time": 1_746_500_000_000, "position": ["lat": 38.7, "lon": -9.1]])
        try alice.ok("point_delete", ["memory": memoryID, "point": (second["point"] as? [String: Any])?["id"] as? Int ?? 0])
        let doomed = try alice.ok("memory_create", ["title": "Doomed", "date": "2024-01-01"])
        try alice.ok("memory_delete", ["memory": (doomed["memory"] as? [String: Any])?["id"] as? Int ?? 0])
    }

    /// The same kinds again after the snapshot, so that a start replays each from the log.
    private static func secondRun(port: Int) throws {
        let alice = try V1Client(port: port)
        let bob = try V1Client(port: port)
        let dave = try V1Client(port: port)
        try alice.logIn("alice")
        try bob.logIn("bob")
        try dave.logIn("dave")
        try V1Client(port: port).signUp("erin")
        try bob.ok("friend_accept", ["user": "dave"])
        try bob.ok("friend_remove", ["user": "dave", "client_id": "rm-1"])
        try alice.ok("friend_request", ["user": "dave", "message": "again?"])
        try dave.ok("friend_decline", ["user": "alice"])

        try bob.ok("publish", ["channel": "chat:alice~bob", "data": ["text": "back"], "client_id": "b-1"])
        try alice.ok("mark_read", ["channel": "chat:alice~bob", "offset": 3, "client_id": "mr-1"])
        try alice.ok("publish", ["channel": "room:lobby", "data": [1, 2.5, "three", NSNull()]])

        let post = try bob.ok("post", ["text": "gym later", "activity": "Gym"])
        let postID = (post["post"] as? [String: Any])?["id"] as? Int ?? 0
        try alice.ok("like", ["post": postID, "client_id": "l-1"])
        try alice.ok("comment", ["post": postID, "text": "sure"])
        try alice.ok("like", ["post": postID, "liked": false])
        let gone = try alice.ok("post", ["text": "oops"])
        try alice.ok("post_delete", ["post": (gone["post"] as? [String: Any])?["id"] as? Int ?? 0, "client_id": "pd-1"])

        try bob.ok("activity_on", ["activity": "Gym", "friends": ["alice"]])
        try alice.ok("activity_off", ["activity": "Coffee", "client_id": "off-1"])

        let gym = try alice.ok("place_set", ["label": "Gym", "lat": 51.51, "lon": -0.1, "radius": 50])
        let gymID = (gym["place"] as? [String: Any])?["id"] as? Int ?? 0
        try alice.ok("region", ["place_id": gymID, "event": "enter", "time": 1_700_000_200_000])
        try alice.ok("location_fix", ["lat": 51.51, "lon": -0.1, "accuracy": 10, "time": 1_700_000_300_000])

        let memory = try alice.ok("memory_create", ["title": "Porto", "date": "2025-06-01"])
        let memoryID = (memory["memory"] as? [String: Any])?["id"] as? Int ?? 0
        try alice.ok("point_add", ["memory": memoryID, "time": 1_748_700_000_000, "photos": [PhotoRequest.hash(photo)], "client_id": "pt-1"])
        try alice.ok("memory_update", ["memory": memoryID, "position": ["lat": 41.15, "lon": -8.61], "client_id": "mu-1"])
    }
}
