/// The writes that take an optional `client_id` making a retry safe (protocol.md, "Retries"):
/// sent again with the same one, the write is done at most once. `publish` keeps its id with
/// the publication; the server keeps the first result of the others.
///
/// Not here: the session ops (a signup's result is a token the server never stores),
/// subscriptions (state of one connection), `typing` (nothing stored) and location reports (a
/// repeated `time` is ignored already).
public enum KeyedWrites {
    public static let ops: Set<String> = [
        "publish", "friend_request", "friend_accept", "friend_decline", "friend_cancel", "friend_remove", "mark_read",
        // Feed.
        "post", "like", "comment", "post_delete",
        // Activities.
        "activity_on", "activity_off",
        // Places.
        "place_set", "place_remove",
        // Memories.
        "memory_create", "memory_update", "memory_delete", "point_add", "point_update", "point_delete",
        // Blocking.
        "block", "unblock",
    ]
}
