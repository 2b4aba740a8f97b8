/// An account's sign-in through an identity provider (OpenID Connect) or an app backend: the
/// issuer's user (`issuer`, `subject`) and when it was linked, milliseconds since the Unix epoch.
public struct LinkedIdentity: Sendable, Equatable {
    public var issuer: String
    public var subject: String
    public var linkedAt: Int64

    public init(issuer: String, subject: String, linkedAt: Int64) {
        self.issuer = issuer
        self.subject = subject
        self.linkedAt = linkedAt
    }

    public var json: JSONValue {
        .object([("issuer", .string(issuer)), ("subject", .string(subject)), ("linked_at", .integer(linkedAt))])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(issuer: try json.requiredString("issuer"), subject: try json.requiredString("subject"), linkedAt: try json.requiredInt64("linked_at"))
    }

    /// The `identities` member of a result.
    public static func list(in result: JSONValue) throws(WireFormatError) -> [LinkedIdentity] {
        guard case .array(let values)? = result["identities"] else { throw WireFormatError("identities must be an array") }
        return try values.map { value throws(WireFormatError) in try LinkedIdentity(json: value) }
    }
}
