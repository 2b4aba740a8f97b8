/// A publisher's own id for a publication (`client_id`): unique per publisher, not globally,
/// so two users choosing the same id never collide.
struct ClientPublicationID: Hashable, Sendable {
    var from: Username?
    var clientID: String
}
