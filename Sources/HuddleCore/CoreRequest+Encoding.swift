import HuddleProtocol

/// The envelope as bytes, written by hand (no synthesized `Codable`: renaming a Swift property
/// must not change what crosses machines in cluster mode). A client's op travels as the wire
/// request it came as (`RequestEncoder`, read back by `RequestDecoder`); the server's own
/// requests as `{"kind": …}` objects. Byte strings (token hashes, salts) are lowercase hex.
///
///     {"connection": {"loop": 0, "serial": 7}, "request": {"id": "1", "op": "like", "post": 3}}
///     {"connection": {"loop": 0, "serial": 7}, "id": "2", "body": {"kind": "begin_login", …}}
extension CoreRequest {
    public func encoded() -> [UInt8] {
        var members: [(String, JSONValue)] = []
        if let connection {
            members.append(("connection", connection.persisted))
        }
        if case .operation(let operation) = body {
            // An op always has its id (the core ignores one without).
            let request = RequestEncoder.encode(ClientRequest(id: requestID ?? "", operation: operation, clientID: clientID))
            members.append(("request", .raw(String(decoding: request, as: UTF8.self))))
        } else {
            if let requestID { members.append(("id", .string(requestID))) }
            members.append(("body", .object(body.ownFields)))
        }
        var bytes: [UInt8] = []
        JSONWriter.append(.object(members), to: &bytes)
        return bytes
    }

    /// nil for bytes `encoded()` did not make.
    public init?(encoded bytes: [UInt8], limits: ProtocolLimits = ProtocolLimits()) {
        guard let envelope = try? JSONParser.parse(bytes, maxDepth: limits.maxDepth + 2) else { return nil }
        var connection: ConnectionRef?
        if let ref = envelope["connection"] {
            guard let decoded = try? ConnectionRef(persisted: ref) else { return nil }
            connection = decoded
        }
        if let request = envelope["request"] {
            guard case .success(let decoded) = RequestDecoder.decode(Array(JSONWriter.serialize(request).utf8), limits: limits) else { return nil }
            self.init(connection: connection, requestID: decoded.id, clientID: decoded.clientID, .operation(decoded.operation))
            return
        }
        guard let fields = envelope["body"], let body = CoreRequestBody(ownFields: fields) else { return nil }
        let requestID = envelope["id"]
        if let requestID, requestID.stringValue == nil { return nil }
        self.init(connection: connection, requestID: requestID?.stringValue, body)
    }
}

extension CoreRequestBody {
    /// The server's own requests; `.operation` travels as a wire request instead.
    fileprivate var ownFields: [(String, JSONValue)] {
        switch self {
        case .operation(let operation):
            return [("kind", .string("operation"))] + RequestEncoder.arguments(of: operation)
        case let .beginSignUp(username, email, password, address):
            return [("kind", .string("begin_sign_up")), ("username", .string(username)), ("email", .string(email)), ("password", .string(password)), ("address", .string(address))]
        case let .signUp(username, email, passwordLength, passwordEqualsUsername, address, credentials, session):
            return [
                ("kind", .string("sign_up")), ("username", .string(username)), ("email", .string(email)), ("password_length", .integer(passwordLength)),
                ("password_equals_username", .bool(passwordEqualsUsername)), ("address", .string(address)),
                ("salt", .hex(credentials.salt)), ("hash", .hex(credentials.hash)), ("iterations", .integer(credentials.iterations)),
            ] + Self.fields(of: session)
        case let .beginLogin(login, address, password):
            return [("kind", .string("begin_login")), ("login", .string(login)), ("address", .string(address)), ("password", .string(password))]
        case let .finishLogin(username, passwordMatched, address, session, refusal):
            var fields: [(String, JSONValue)] = [
                ("kind", .string("finish_login")), ("username", username.map(JSONValue.string) ?? .null), ("password_matched", .bool(passwordMatched)),
                ("address", .string(address)),
            ] + Self.fields(of: session)
            if let refusal {
                fields += [("refusal_code", .string(refusal.code.rawValue)), ("refusal_message", .string(refusal.message))]
                if let wait = refusal.retryAfterMilliseconds { fields.append(("refusal_retry_after_ms", .integer(Int(wait)))) }
            }
            return fields
        case let .authenticate(tokenHash):
            return [("kind", .string("authenticate")), ("token_hash", .hex(tokenHash))]
        case let .serverPublish(channel, type, data):
            return [("kind", .string("server_publish")), ("channel", .string(channel)), ("type", .string(type)), ("data", .string(data))]
        case let .disconnectUser(username):
            return [("kind", .string("disconnect_user")), ("username", .string(username))]
        case let .moderation(request):
            return [("kind", .string("moderation")), ("request", .object(request.fields))]
        case .removeContent(.publication(let channel, let offset)):
            return [("kind", .string("remove_publication")), ("channel", .string(channel)), ("offset", .integer(offset))]
        case .removeContent(.post(let id)):
            return [("kind", .string("remove_post")), ("post", .integer(id))]
        case .removeContent(.comment(let post, let comment)):
            return [("kind", .string("remove_comment")), ("post", .integer(post)), ("comment", .integer(comment))]
        case let .deleteUser(username):
            return [("kind", .string("delete_user")), ("username", .string(username))]
        case let .finishAccountDeletion(username, passwordMatched, address):
            return [
                ("kind", .string("finish_account_deletion")), ("username", .string(username)), ("password_matched", .bool(passwordMatched)),
                ("address", .string(address)),
            ]
        case let .authorizePhotoUpload(caller, tokenHash, size):
            return [("kind", .string("authorize_photo_upload")), ("caller", caller.persisted), ("token_hash", .hex(tokenHash)), ("size", .integer(size))]
        case let .recordPhoto(caller, tokenHash, hash, size):
            return [("kind", .string("record_photo")), ("caller", caller.persisted), ("token_hash", .hex(tokenHash)), ("hash", .string(hash)), ("size", .integer(size))]
        case let .authorizePhotoRead(caller, tokenHash, hash):
            return [("kind", .string("authorize_photo_read")), ("caller", caller.persisted), ("token_hash", .hex(tokenHash)), ("hash", .string(hash))]
        case let .exportArchive(caller, tokenHash):
            return [("kind", .string("export_archive")), ("caller", caller.persisted), ("token_hash", .hex(tokenHash))]
        case let .connectionOpened(address):
            return [("kind", .string("connection_opened")), ("address", .string(address))]
        case .connectionClosed:
            return [("kind", .string("connection_closed"))]
        case .tick:
            return [("kind", .string("tick"))]
        case .expireActivities:
            return [("kind", .string("expire_activities"))]
        case .continueErasure:
            return [("kind", .string("continue_erasure"))]
        case .recordSessionsSeen:
            return [("kind", .string("record_sessions_seen"))]
        // Passwords.
        case let .finishPasswordChange(username, verified, newCredentials, revokeOthers, address):
            var fields: [(String, JSONValue)] = [
                ("kind", .string("finish_password_change")), ("username", .string(username)), ("verified_salt", .hex(verified.salt)),
                ("verified_hash", .hex(verified.hash)), ("verified_iterations", .integer(verified.iterations)), ("revoke_others", .bool(revokeOthers)),
                ("address", .string(address)),
            ]
            if let newCredentials {
                fields += [("salt", .hex(newCredentials.salt)), ("hash", .hex(newCredentials.hash)), ("iterations", .integer(newCredentials.iterations))]
            }
            return fields
        case let .requestPasswordReset(login, address, codeHash, expiresAt):
            return [
                ("kind", .string("request_password_reset")), ("login", .string(login)), ("address", .string(address)), ("code_hash", .hex(codeHash)),
                ("expires_at", .integer(expiresAt)),
            ]
        case let .beginPasswordReset(login, address, codeHash, newPassword):
            return [
                ("kind", .string("begin_password_reset")), ("login", .string(login)), ("address", .string(address)), ("code_hash", .hex(codeHash)),
                ("new_password", .string(newPassword)),
            ]
        case let .finishPasswordReset(username, codeHash, credentials, address):
            return [
                ("kind", .string("finish_password_reset")), ("username", .string(username)), ("code_hash", .hex(codeHash)),
                ("salt", .hex(credentials.salt)), ("hash", .hex(credentials.hash)), ("iterations", .integer(credentials.iterations)),
                ("address", .string(address)),
            ]
        case let .presenceElsewhere(user, node, online):
            return [("kind", .string("presence_elsewhere")), ("user", .string(user)), ("node", .string(node)), ("online", .bool(online))]
        case let .nodeGone(node):
            return [("kind", .string("node_gone")), ("node", .string(node))]
        case .localTick:
            return [("kind", .string("local_tick"))]
        case let .identityVerified(proof):
            return [("kind", .string("identity_verified"))] + Self.fields(of: proof) + Self.fields(of: proof.session)
        }
    }

    fileprivate init?(ownFields f: JSONValue) {
        func string(_ key: String) -> String? { f[key]?.stringValue }
        func int(_ key: String) -> Int? { f[key]?.int64Value.flatMap { Int(exactly: $0) } }
        func bytes(_ key: String) -> [UInt8]? { f[key]?.hexBytes }
        func ref(_ key: String) -> ConnectionRef? { f[key].flatMap { try? ConnectionRef(persisted: $0) } }
        func session() -> NewSession? {
            guard let tokenHash = bytes("token_hash"), let expiresAt = f["expires_at"]?.int64Value else { return nil }
            let device = f["device"]
            if let device, device != .null, device.stringValue == nil { return nil }
            return NewSession(tokenHash: tokenHash, expiresAt: expiresAt, device: device?.stringValue)
        }
        switch string("kind") {
        case "begin_sign_up":
            guard let username = string("username"), let email = string("email"), let password = string("password"), let address = string("address") else { return nil }
            self = .beginSignUp(username: username, email: email, password: password, address: address)
        case "sign_up":
            guard let username = string("username"), let email = string("email"), let length = int("password_length"),
                  let equals = f["password_equals_username"]?.boolValue, let address = string("address"), let salt = bytes("salt"),
                  let hash = bytes("hash"), let iterations = int("iterations"), let session = session()
            else { return nil }
            self = .signUp(
                username: username, email: email, passwordLength: length, passwordEqualsUsername: equals, address: address,
                credentials: Credentials(salt: salt, hash: hash, iterations: iterations), session: session)
        case "begin_login":
            guard let login = string("login"), let address = string("address"), let password = string("password") else { return nil }
            self = .beginLogin(login: login, address: address, password: password)
        case "finish_login":
            guard let matched = f["password_matched"]?.boolValue, let address = string("address"), let session = session() else { return nil }
            let username = f["username"]
            if let username, username != .null, username.stringValue == nil { return nil }
            var refusal: CoreError?
            if let code = string("refusal_code") {
                guard let known = CoreErrorCode(rawValue: code), let message = string("refusal_message") else { return nil }
                refusal = CoreError(known, message, retryAfterMilliseconds: f["refusal_retry_after_ms"]?.int64Value)
            }
            self = .finishLogin(username: username?.stringValue, passwordMatched: matched, address: address, session: session, refusal: refusal)
        case "authenticate":
            guard let tokenHash = bytes("token_hash") else { return nil }
            self = .authenticate(tokenHash: tokenHash)
        case "server_publish":
            guard let channel = string("channel"), let type = string("type"), let data = string("data") else { return nil }
            self = .serverPublish(channel: channel, type: type, data: data)
        case "disconnect_user":
            guard let username = string("username") else { return nil }
            self = .disconnectUser(username: username)
        case "moderation":
            guard let fields = f["request"], let request = ModerationRequest(fields: fields) else { return nil }
            self = .moderation(request)
        case "remove_publication":
            guard let channel = string("channel"), let offset = f["offset"]?.uint64Value else { return nil }
            self = .removeContent(.publication(channel: channel, offset: offset))
        case "remove_post":
            guard let id = f["post"]?.uint64Value else { return nil }
            self = .removeContent(.post(id))
        case "remove_comment":
            guard let post = f["post"]?.uint64Value, let comment = f["comment"]?.uint64Value else { return nil }
            self = .removeContent(.comment(post: post, comment: comment))
        case "delete_user":
            guard let username = string("username") else { return nil }
            self = .deleteUser(username: username)
        case "finish_account_deletion":
            guard let username = string("username"), let matched = f["password_matched"]?.boolValue, let address = string("address") else { return nil }
            self = .finishAccountDeletion(username: username, passwordMatched: matched, address: address)
        case "authorize_photo_upload":
            guard let caller = ref("caller"), let tokenHash = bytes("token_hash"), let size = int("size") else { return nil }
            self = .authorizePhotoUpload(caller: caller, tokenHash: tokenHash, size: size)
        case "record_photo":
            guard let caller = ref("caller"), let tokenHash = bytes("token_hash"), let hash = string("hash"), let size = int("size") else { return nil }
            self = .recordPhoto(caller: caller, tokenHash: tokenHash, hash: hash, size: size)
        case "authorize_photo_read":
            guard let caller = ref("caller"), let tokenHash = bytes("token_hash"), let hash = string("hash") else { return nil }
            self = .authorizePhotoRead(caller: caller, tokenHash: tokenHash, hash: hash)
        case "export_archive":
            guard let caller = ref("caller"), let tokenHash = bytes("token_hash") else { return nil }
            self = .exportArchive(caller: caller, tokenHash: tokenHash)
        case "connection_opened":
            guard let address = string("address") else { return nil }
            self = .connectionOpened(address: address)
        case "connection_closed":
            self = .connectionClosed
        case "tick":
            self = .tick
        case "expire_activities":
            self = .expireActivities
        case "continue_erasure":
            self = .continueErasure
        case "record_sessions_seen":
            self = .recordSessionsSeen
        // Passwords.
        case "finish_password_change":
            guard let username = string("username"), let verifiedSalt = bytes("verified_salt"), let verifiedHash = bytes("verified_hash"),
                  let verifiedIterations = int("verified_iterations"), let revokeOthers = f["revoke_others"]?.boolValue, let address = string("address")
            else { return nil }
            var newCredentials: Credentials?
            if let salt = bytes("salt") {
                guard let hash = bytes("hash"), let iterations = int("iterations") else { return nil }
                newCredentials = Credentials(salt: salt, hash: hash, iterations: iterations)
            }
            self = .finishPasswordChange(
                username: username, verified: Credentials(salt: verifiedSalt, hash: verifiedHash, iterations: verifiedIterations),
                newCredentials: newCredentials, revokeOthers: revokeOthers, address: address)
        case "request_password_reset":
            guard let login = string("login"), let address = string("address"), let codeHash = bytes("code_hash"),
                  let expiresAt = f["expires_at"]?.int64Value
            else { return nil }
            self = .requestPasswordReset(login: login, address: address, codeHash: codeHash, expiresAt: expiresAt)
        case "begin_password_reset":
            guard let login = string("login"), let address = string("address"), let codeHash = bytes("code_hash"),
                  let newPassword = string("new_password")
            else { return nil }
            self = .beginPasswordReset(login: login, address: address, codeHash: codeHash, newPassword: newPassword)
        case "finish_password_reset":
            guard let username = string("username"), let codeHash = bytes("code_hash"), let salt = bytes("salt"), let hash = bytes("hash"),
                  let iterations = int("iterations"), let address = string("address")
            else { return nil }
            self = .finishPasswordReset(
                username: username, codeHash: codeHash, credentials: Credentials(salt: salt, hash: hash, iterations: iterations), address: address)
        case "presence_elsewhere":
            guard let user = string("user"), let node = string("node"), let online = f["online"]?.boolValue else { return nil }
            self = .presenceElsewhere(user: user, node: node, online: online)
        case "node_gone":
            guard let node = string("node") else { return nil }
            self = .nodeGone(node: node)
        case "local_tick":
            self = .localTick
        case "identity_verified":
            guard let session = session(), let proof = Self.proof(f, session: session) else { return nil }
            self = .identityVerified(proof)
        default:
            return nil  // "operation" travels as a wire request, not as a body
        }
    }

    private static func fields(of proof: IdentityProof) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)]
        switch proof.purpose {
        case .signIn(let username): fields = [("purpose", .string("sign_in")), ("username", username.map(JSONValue.string) ?? .null)]
        case .link: fields = [("purpose", .string("link"))]
        case .appAuth: fields = [("purpose", .string("app_auth"))]
        case .deleteAccount: fields = [("purpose", .string("delete_account"))]
        }
        if let identity = proof.identity {
            fields += [
                ("issuer", .string(identity.issuer)), ("subject", .string(identity.subject)),
                ("email", identity.email.map(JSONValue.string) ?? .null),
                ("proposed_username", identity.proposedUsername.map(JSONValue.string) ?? .null),
                ("nonce", identity.nonce.map(JSONValue.string) ?? .null), ("token_expires_at", .integer(identity.expiresAt)),
                ("token_issued_at", identity.issuedAt.map(JSONValue.integer) ?? .null),
            ]
        }
        if let refusal = proof.refusal {
            fields += [("refusal_code", .string(refusal.code.rawValue)), ("refusal_message", .string(refusal.message))]
            if let wait = refusal.retryAfterMilliseconds { fields.append(("refusal_retry_after_ms", .integer(Int(wait)))) }
        }
        return fields
    }

    private static func proof(_ f: JSONValue, session: NewSession) -> IdentityProof? {
        func optionalString(_ key: String) -> String?? {
            guard let value = f[key], value != .null else { return .some(nil) }
            return value.stringValue.map { .some($0) } ?? nil
        }
        let purpose: IdentityProof.Purpose
        switch f["purpose"]?.stringValue {
        case "sign_in":
            guard let username = optionalString("username") else { return nil }
            purpose = .signIn(username: username)
        case "link": purpose = .link
        case "app_auth": purpose = .appAuth
        case "delete_account": purpose = .deleteAccount
        default: return nil
        }
        var identity: VerifiedIdentity?
        if let issuer = f["issuer"]?.stringValue {
            guard let subject = f["subject"]?.stringValue, let email = optionalString("email"), let proposed = optionalString("proposed_username"),
                let nonce = optionalString("nonce"), let expiresAt = f["token_expires_at"]?.int64Value
            else { return nil }
            identity = VerifiedIdentity(
                issuer: issuer, subject: subject, email: email, proposedUsername: proposed, nonce: nonce, expiresAt: expiresAt,
                issuedAt: f["token_issued_at"]?.int64Value)
        }
        var refusal: CoreError?
        if let code = f["refusal_code"]?.stringValue {
            guard let known = CoreErrorCode(rawValue: code), let message = f["refusal_message"]?.stringValue else { return nil }
            refusal = CoreError(known, message, retryAfterMilliseconds: f["refusal_retry_after_ms"]?.int64Value)
        }
        return IdentityProof(purpose: purpose, identity: identity, refusal: refusal, session: session)
    }

    private static func fields(of session: NewSession) -> [(String, JSONValue)] {
        [("token_hash", .hex(session.tokenHash)), ("expires_at", .integer(session.expiresAt)), ("device", session.device.map(JSONValue.string) ?? .null)]
    }
}

extension JSONValue {
    fileprivate static func hex(_ bytes: [UInt8]) -> JSONValue { .string(Hex.encode(bytes)) }

    fileprivate var hexBytes: [UInt8]? { stringValue.flatMap(Hex.decode) }
}
