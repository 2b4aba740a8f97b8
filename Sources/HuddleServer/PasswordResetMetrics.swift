import Synchronization

/// The reset-mail hand-off's counters for `GET /metrics`: how many mails the webhook took, how
/// many attempts failed, how many were given up. Never a code, an address or a username.
final class PasswordResetMetrics: Sendable {
    let sent = Atomic<Int>(0)
    let failedAttempts = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)

    init() {}

    func prometheusText() -> String {
        var text = "# HELP huddle_password_reset_mails_sent_total Reset codes the mail webhook accepted.\n"
        text += "# TYPE huddle_password_reset_mails_sent_total counter\n"
        text += "huddle_password_reset_mails_sent_total \(sent.load(ordering: .relaxed))\n"
        text += "# HELP huddle_password_reset_mails_failed_total Mail webhook attempts that failed (each retry counts).\n"
        text += "# TYPE huddle_password_reset_mails_failed_total counter\n"
        text += "huddle_password_reset_mails_failed_total \(failedAttempts.load(ordering: .relaxed))\n"
        text += "# HELP huddle_password_reset_mails_dropped_total Reset mails given up (queue full, refused, or every attempt failed).\n"
        text += "# TYPE huddle_password_reset_mails_dropped_total counter\n"
        text += "huddle_password_reset_mails_dropped_total \(dropped.load(ordering: .relaxed))\n"
        return text
    }
}
