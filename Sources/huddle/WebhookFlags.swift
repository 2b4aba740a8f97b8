import ArgumentParser
import HuddleServer

/// The webhook flags (`--push-webhook`, `--password-reset-webhook`), each with its `-secret`
/// and `-ca`.
extension Serve {
    /// A URL Huddle can POST to, a CA only for https://, neither of the others without the URL.
    static func checkWebhook(_ url: String?, secret: String?, ca: String?, flag: String) throws {
        guard let url else {
            if secret != nil || ca != nil { throw ValidationError("--\(flag)-secret and --\(flag)-ca need --\(flag)") }
            return
        }
        do {
            _ = try WebhookURL(url)
        } catch {
            throw ValidationError("--\(flag): \(error.reason)")
        }
        if ca != nil, !url.lowercased().hasPrefix("https://") { throw ValidationError("--\(flag)-ca is for an https:// webhook") }
    }
}
