import HuddleCore
import HuddleProtocol

/// A complete HTTP response of the photo endpoints (and the export archive's refusals). Errors have the HTTP API's JSON shape,
/// `{"error": {"code": …, "message": …}}`.
struct PhotoResponse {
    var status: Int
    var headers: [(String, String)] = []
    var contentType = "application/json"
    var body: [UInt8]

    static func error(
        _ status: Int, _ code: String, _ message: String, headers: [(String, String)] = [], retryAfterMilliseconds: Int? = nil
    ) -> PhotoResponse {
        let error = ReplyError(code: code, message: message, retryAfterMilliseconds: retryAfterMilliseconds.map(Int64.init))
        return PhotoResponse(status: status, headers: headers, body: error.httpBody)
    }

    /// The core refused: a bad or expired token is 401; a photo the caller does not own is 404,
    /// the same as one that does not exist, so a stranger learns nothing from the status.
    static func refused(_ error: CoreError) -> PhotoResponse {
        switch error.code {
        case .invalidToken, .tokenExpired:
            return .error(401, error.code.rawValue, error.message, headers: [("WWW-Authenticate", "Bearer")])
        case .photoNotFound:
            return .error(404, error.code.rawValue, error.message)
        case .tooManyPhotos:
            return .error(403, error.code.rawValue, error.message)
        case .photoQuotaExceeded:
            return .error(507, error.code.rawValue, error.message)
        default:
            return .error(400, error.code.rawValue, error.message)
        }
    }

    static let unauthenticated = PhotoResponse.error(
        401, "not_authenticated", "send Authorization: Bearer <session token>", headers: [("WWW-Authenticate", "Bearer")])

    static let unavailable = PhotoResponse.error(503, "unavailable", "storage is refusing writes; reads still work, try again later")

    static let internalError = PhotoResponse.error(500, "internal_error", "the photo could not be read")
}
