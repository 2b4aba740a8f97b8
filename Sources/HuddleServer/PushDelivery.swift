/// One notification as the webhook receives it: the whole HTTP request, built once when the
/// notification arrives (every attempt sends the same bytes), and what log lines name it by.
struct PushDelivery: Sendable {
    var id: String
    var user: String
    var kind: String
    var request: [UInt8]
}
