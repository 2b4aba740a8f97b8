/// protocol.md, `signup`: at most 254 characters, one `@` with text on both sides and a dot in
/// the domain; unique case-insensitively, so the canonical form is lowercase.
enum EmailRules {
    /// RFC 5321's limit on a path, counted in UTF-8 bytes of the canonical form.
    static let maxLength = 254

    /// The canonical (lowercase) address, or nil when `text` is not an email address.
    /// The domain must have a dot and no empty labels ("a@b..c", "a@.b", "a@b." are refused);
    /// spaces and control characters are refused anywhere, since no deliverable address has them.
    static func canonical(_ text: String) -> String? {
        let lowered = text.lowercased()
        let utf8 = lowered.utf8
        guard !utf8.isEmpty, utf8.count <= maxLength else { return nil }
        guard !utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        let parts = utf8.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 2, let local = parts.first, let domain = parts.last else { return nil }
        guard !local.isEmpty, domain.contains(UInt8(ascii: ".")) else { return nil }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.allSatisfy({ !$0.isEmpty }) else { return nil }
        return lowered
    }
}
