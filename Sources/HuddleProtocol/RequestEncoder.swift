/// A decoded request written back as the wire request it came as (protocol.md, "Request"):
/// `RequestDecoder.decode(RequestEncoder.encode(r))` gives `r` again. What moves a request
/// between machines (cluster mode) and what HuddleClient and the load-test harness build their
/// requests with.
public enum RequestEncoder {
    /// `omittingDefaults`: arguments holding what the decoder fills in when they are left out
    /// (`RequestDefaults`) are left out, as a client sends them; decoding gives the same request.
    public static func encode(_ request: ClientRequest, omittingDefaults: Bool = false) -> [UInt8] {
        var members: [(String, JSONValue)] = [("id", .string(request.id)), ("op", .string(request.operation.name))]
        if omittingDefaults {
            let defaulted = RequestDefaults.defaulted(in: request.operation)
            members += arguments(of: request.operation).filter { !defaulted.contains($0.0) }
        } else {
            members += arguments(of: request.operation)
        }
        if let clientID = request.clientID { members.append(("client_id", .string(clientID))) }
        var bytes: [UInt8] = []
        JSONWriter.append(.object(members), to: &bytes)
        return bytes
    }

    /// The op's arguments under their wire names; optional ones only when given.
    public static func arguments(of operation: Operation) -> [(String, JSONValue)] {
        switch operation {
        case .ping, .whoami, .friendRequests, .friends, .unread, .activities, .memories:
            return []
        case let .signup(username, email, password, device):
            return [("username", .string(username)), ("email", .string(email)), ("password", .string(password))] + optional("device", device.map(JSONValue.string))
        case let .login(login, password, device):
            return [("login", .string(login)), ("password", .string(password))] + optional("device", device.map(JSONValue.string))
        case let .auth(token):
            return [("token", .string(token))]
        case let .logout(all):
            return [("all", .bool(all))]
        case let .subscribe(channel, since):
            let position = since.map { JSONValue.object([("epoch", .string($0.epoch)), ("offset", .integer($0.offset))]) }
            return [("channel", .string(channel))] + optional("since", position)
        case let .unsubscribe(channel), let .presence(channel), let .typing(channel):
            return [("channel", .string(channel))]
        case let .publish(channel, type, data):
            return [("channel", .string(channel)), ("type", .string(type)), ("data", .raw(data))]
        case let .history(channel, before, limit):
            return [("channel", .string(channel)), ("limit", .integer(limit))] + optional("before", before.map(JSONValue.integer))
        case let .userSearch(prefix, limit):
            return [("prefix", .string(prefix)), ("limit", .integer(limit))]
        case let .friendRequest(user, message):
            return [("user", .string(user)), ("message", .string(message))]
        case let .friendAccept(user), let .friendDecline(user), let .friendCancel(user), let .friendRemove(user), let .whereIs(user):
            return [("user", .string(user))]
        case let .markRead(channel, offset):
            return [("channel", .string(channel)), ("offset", .integer(offset))]
        // Feed.
        case let .post(text, activity, at):
            return [("text", .string(text))] + optional("activity", activity.map(JSONValue.string)) + optional("at", at.map(JSONValue.integer))
        case let .feed(before, limit):
            return [("limit", .integer(limit))] + optional("before", before.map(JSONValue.integer))
        case let .like(post, liked):
            return [("post", .integer(post))] + optional("liked", liked.map(JSONValue.bool))
        case let .comment(post, text):
            return [("post", .integer(post)), ("text", .string(text))]
        case let .comments(post, before, limit):
            return [("post", .integer(post)), ("limit", .integer(limit))] + optional("before", before.map(JSONValue.integer))
        case let .postDelete(post):
            return [("post", .integer(post))]
        // Activities.
        case let .activityOn(activity, friends, expiresIn):
            return [("activity", .string(activity))] + optional("friends", friends.map { .array($0.map(JSONValue.string)) })
                + optional("expires_in", expiresIn.map(JSONValue.integer))
        case let .activityOff(activity):
            return [("activity", .string(activity))]
        case let .matches(byActivity):
            return [("order", .string(byActivity ? "activity" : "time"))]
        // Places.
        case let .placeSet(id, label, latitude, longitude, radius):
            return optional("place_id", id.map(JSONValue.integer))
                + [("label", .string(label)), ("lat", .double(latitude)), ("lon", .double(longitude)), ("radius", .double(radius))]
        case let .placeRemove(id):
            return [("place_id", .integer(id))]
        case let .places(user):
            return optional("user", user.map(JSONValue.string))
        case let .locationFix(latitude, longitude, accuracy, time):
            return [("lat", .double(latitude)), ("lon", .double(longitude)), ("accuracy", .double(accuracy)), ("time", .integer(time))]
        case let .region(placeID, entered, time):
            return [("place_id", .integer(placeID)), ("event", .string(entered ? "enter" : "exit")), ("time", .integer(time))]
        // Memories.
        case let .memoryCreate(fields):
            return memory(fields)
        case let .memoryUpdate(memory, fields):
            return [("memory", .integer(memory))] + self.memory(fields)
        case let .memoryDelete(memory), let .memory(memory):
            return [("memory", .integer(memory))]
        case let .pointAdd(memory, fields):
            return [("memory", .integer(memory))] + point(fields)
        case let .pointUpdate(memory, point, fields):
            return [("memory", .integer(memory)), ("point", .integer(point))] + self.point(fields)
        case let .pointDelete(memory, point):
            return [("memory", .integer(memory)), ("point", .integer(point))]
        // Identities.
        case let .identitySignIn(token, nonce, username, device):
            return [("token", .string(token))] + optional("nonce", nonce.map(JSONValue.string))
                + optional("username", username.map(JSONValue.string)) + optional("device", device.map(JSONValue.string))
        case let .identityLink(token, nonce):
            return [("token", .string(token))] + optional("nonce", nonce.map(JSONValue.string))
        case let .identityUnlink(issuer, subject):
            return [("issuer", .string(issuer)), ("subject", .string(subject))]
        case .identities:
            return []
        case let .appAuth(token, device):
            return [("token", .string(token))] + optional("device", device.map(JSONValue.string))
        // Profiles and sessions.
        case .profile, .sessions:
            return []
        case let .profileSet(displayName, avatar):
            return optional("display_name", displayName.map(JSONValue.string)) + optional("avatar", avatar.map(JSONValue.string))
        case let .sessionRevoke(id):
            return [("session", .string(id))]
        case let .passwordChange(oldPassword, newPassword, revokeOthers):
            return [("old_password", .string(oldPassword)), ("new_password", .string(newPassword)), ("revoke_others", .bool(revokeOthers))]
        case let .passwordResetRequest(login):
            return [("login", .string(login))]
        case let .passwordReset(login, code, newPassword):
            return [("login", .string(login)), ("code", .string(code)), ("new_password", .string(newPassword))]
        // Blocking.
        case let .block(user), let .unblock(user):
            return [("user", .string(user))]
        case .blocks:
            return []
        // Reports.
        case let .report(target, reason, text):
            return [("kind", .string(target.kind))] + target.requestFields + [("reason", .string(reason)), ("text", .string(text))]
        // Moderation and deletion.
        case let .accountDelete(password):
            return [("password", .string(password))]
        case .accountExport:
            return []
        case let .accountDeleteWithIdentity(token, nonce):
            return [("token", .string(token))] + optional("nonce", nonce.map(JSONValue.string))
        }
    }

    private static func optional(_ name: String, _ value: JSONValue?) -> [(String, JSONValue)] {
        value.map { [(name, $0)] } ?? []
    }

    private static func memory(_ fields: MemoryArguments) -> [(String, JSONValue)] {
        optional("title", fields.title.map(JSONValue.string)) + optional("date", fields.date.map(JSONValue.string))
            + optional("place_name", fields.placeName.map(JSONValue.string)) + position(fields.position)
    }

    private static func point(_ fields: MemoryPointArguments) -> [(String, JSONValue)] {
        optional("time", fields.time.map(JSONValue.integer)) + position(fields.position)
            + optional("place_name", fields.placeName.map(JSONValue.string)) + optional("note", fields.note.map(JSONValue.string))
            + optional("photos", fields.photos.map { .array($0.map(JSONValue.string)) })
    }

    private static func position(_ position: MemoryPositionArgument) -> [(String, JSONValue)] {
        switch position {
        case .absent: []
        case .null: [("position", .null)]
        case .coordinates(let latitude, let longitude): [("position", .object([("lat", .double(latitude)), ("lon", .double(longitude))]))]
        }
    }
}
