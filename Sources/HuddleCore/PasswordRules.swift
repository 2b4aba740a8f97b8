/// protocol.md, `signup`: a password is 8–128 characters and not equal to the username.
/// The core never sees a signup's password (it is hashed first); the server passes its length
/// and whether it equals the username.
enum PasswordRules {
    static let lengths = 8...128
}
