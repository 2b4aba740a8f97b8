import HuddleProtocol

/// The core's outputs as bytes, written by hand like `CoreRequest.encoded()` (cluster mode moves
/// them between machines): one object per case, `{"caseName": {fields}}`, keys in byte order.
/// The values inside are written by their persisted encodings (`PersistedValue`), the ones the
/// log and snapshots use, so a reply crosses machines as it is kept on disk.
///
///     {"typing":{"channel":"chat:alice~bob","to":[{"loop":0,"serial":7}],"user":"alice"}}
extension CoreOutput: PersistedValue {
    public func encoded() -> [UInt8] {
        JSONWriter.bytes(persisted)
    }

    /// nil for bytes `encoded()` did not make.
    public init?(encoded bytes: [UInt8]) {
        guard let value = try? JSONParser.parse(bytes, maxDepth: PersistedRecord.maxDepth),
              let output = try? CoreOutput(persisted: value)
        else { return nil }
        self = output
    }

    var persisted: JSONValue {
        switch self {
        case .reply(let connection, let requestID, let reply):
            .variant("reply", [("connection", connection?.persisted), ("requestID", requestID?.persisted), ("reply", reply.persisted)])
        case .deliver(let publication, let to):
            .variant("deliver", [("publication", publication.persisted), ("to", to.persisted)])
        case .typing(let channel, let user, let to):
            .variant("typing", [("channel", channel.persisted), ("user", user.persisted), ("to", to.persisted)])
        case .presenceChanged(let user, let online, let to):
            .variant("presenceChanged", [("user", user.persisted), ("online", online.persisted), ("to", to.persisted)])
        case .localPresence(let user, let online):
            .variant("localPresence", [("user", user.persisted), ("online", online.persisted)])
        case .verifyPassword(let connection, let requestID, let username, let credentials, let password, let address):
            .variant("verifyPassword", [
                ("connection", connection.persisted), ("requestID", requestID.persisted), ("username", username?.persisted),
                ("credentials", credentials?.persisted), ("password", password.persisted), ("address", address.persisted),
            ])
        case .hashNewPassword(let connection, let requestID, let username, let email, let password, let address):
            .variant("hashNewPassword", [
                ("connection", connection.persisted), ("requestID", requestID.persisted), ("username", username.persisted),
                ("email", email.persisted), ("password", password.persisted), ("address", address.persisted),
            ])
        case .closeConnections(let connections, let code, let reason):
            .variant("closeConnections", [("_0", connections.persisted), ("code", Int(code).persisted), ("reason", reason.persisted)])
        case .sessionAccepted(let connection, let user, let expiresAt):
            .variant("sessionAccepted", [("_0", connection.persisted), ("user", user.persisted), ("expiresAt", expiresAt.persisted)])
        case .authFailed(let connection, let error):
            .variant("authFailed", [("_0", connection.persisted), ("_1", error.persisted)])
        case .feedEvent(let event, let to):
            .variant("feedEvent", [("_0", event.persisted), ("to", to.persisted)])
        case .pushNotification(let notification):
            .variant("pushNotification", [("_0", notification.persisted)])
        case .memoryChanged(let change, let to):
            .variant("memoryChanged", [("_0", change.persisted), ("to", to.persisted)])
        case .photoAccess(let caller, let access):
            .variant("photoAccess", [("caller", caller.persisted), ("_1", access.persisted)])
        // Profiles.
        case .profileChanged(let user, let profile, let time, let to):
            .variant("profileChanged", [
                ("user", user.persisted), ("displayName", profile.displayName?.persisted), ("avatar", profile.avatar?.persisted),
                ("time", time.persisted), ("to", to.persisted),
            ])
        // Passwords.
        case .changePassword(let connection, let requestID, let username, let credentials, let oldPassword, let newPassword, let revokeOthers, let address):
            .variant("changePassword", [
                ("connection", connection.persisted), ("requestID", requestID.persisted), ("username", username.persisted),
                ("credentials", credentials.persisted), ("oldPassword", oldPassword.persisted), ("newPassword", newPassword.persisted),
                ("revokeOthers", revokeOthers.persisted), ("address", address.persisted),
            ])
        case .mailPasswordReset(let connection, let requestID, let username, let email, let expiresAt):
            .variant("mailPasswordReset", [
                ("connection", connection.persisted), ("requestID", requestID.persisted), ("username", username.persisted), ("email", email.persisted),
                ("expiresAt", expiresAt.persisted),
            ])
        case .hashResetPassword(let connection, let requestID, let username, let codeHash, let newPassword, let address):
            .variant("hashResetPassword", [
                ("connection", connection.persisted), ("requestID", requestID.persisted), ("username", username.persisted),
                ("codeHash", codeHash.persisted), ("newPassword", newPassword.persisted), ("address", address.persisted),
            ])
        case .reportFiled(let report):
            .variant("reportFiled", [("_0", report.persisted)])
        case .verifyAccountDeletion(let connection, let requestID, let username, let credentials, let password, let address):
            .variant("verifyAccountDeletion", [
                ("connection", connection.persisted), ("requestID", requestID.persisted), ("username", username.persisted),
                ("credentials", credentials.persisted), ("password", password.persisted), ("address", address.persisted),
            ])
        case .removePhotoFiles(let hashes):
            .variant("removePhotoFiles", [("_0", hashes.persisted)])
        }
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let variant = try PersistedVariant(persisted, "CoreOutput")
        let f = variant.fields
        switch variant.name {
        case "reply": self = .reply(try f.optional("connection"), requestID: try f.optional("requestID"), try f("reply"))
        case "deliver": self = .deliver(try f("publication"), to: try f("to"))
        case "typing": self = .typing(channel: try f("channel"), user: try f("user"), to: try f("to"))
        case "presenceChanged": self = .presenceChanged(user: try f("user"), online: try f("online"), to: try f("to"))
        case "localPresence": self = .localPresence(user: try f("user"), online: try f("online"))
        case "verifyPassword":
            self = .verifyPassword(
                try f("connection"), requestID: try f("requestID"), username: try f.optional("username"), credentials: try f.optional("credentials"),
                password: try f("password"), address: try f("address"))
        case "hashNewPassword":
            self = .hashNewPassword(
                try f("connection"), requestID: try f("requestID"), username: try f("username"), email: try f("email"), password: try f("password"),
                address: try f("address"))
        case "closeConnections":
            let code: Int = try f("code")
            guard let closeCode = UInt16(exactly: code) else { throw RecordDecodingError("CoreOutput.code \(code) is not a close code") }
            self = .closeConnections(try f("_0"), code: closeCode, reason: try f("reason"))
        case "sessionAccepted": self = .sessionAccepted(try f("_0"), user: try f("user"), expiresAt: try f("expiresAt"))
        case "authFailed": self = .authFailed(try f("_0"), try f("_1"))
        case "feedEvent": self = .feedEvent(try f("_0"), to: try f("to"))
        case "pushNotification": self = .pushNotification(try f("_0"))
        case "memoryChanged": self = .memoryChanged(try f("_0"), to: try f("to"))
        case "photoAccess": self = .photoAccess(caller: try f("caller"), try f("_1"))
        // Profiles.
        case "profileChanged":
            self = .profileChanged(
                user: try f("user"), UserProfile(displayName: try f.optional("displayName"), avatar: try f.optional("avatar")), time: try f("time"),
                to: try f("to"))
        // Passwords.
        case "changePassword":
            self = .changePassword(
                try f("connection"), requestID: try f("requestID"), username: try f("username"), credentials: try f("credentials"),
                oldPassword: try f("oldPassword"), newPassword: try f("newPassword"), revokeOthers: try f("revokeOthers"), address: try f("address"))
        case "mailPasswordReset":
            self = .mailPasswordReset(
                try f("connection"), requestID: try f("requestID"), username: try f("username"), email: try f("email"), expiresAt: try f("expiresAt"))
        case "hashResetPassword":
            self = .hashResetPassword(
                try f("connection"), requestID: try f("requestID"), username: try f("username"), codeHash: try f("codeHash"),
                newPassword: try f("newPassword"), address: try f("address"))
        case "reportFiled": self = .reportFiled(try f("_0"))
        case "verifyAccountDeletion":
            self = .verifyAccountDeletion(
                try f("connection"), requestID: try f("requestID"), username: try f("username"), credentials: try f("credentials"),
                password: try f("password"), address: try f("address"))
        case "removePhotoFiles": self = .removePhotoFiles(try f("_0"))
        default: throw variant.unknown()
        }
    }
}
