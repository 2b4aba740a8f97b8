/// The media type a photo is served with, from its first bytes: the formats phones produce
/// (JPEG, PNG, HEIC, WebP, GIF), else `application/octet-stream`. Sniffed rather than taken from
/// the upload, so a client cannot make the server label bytes as something they are not (the
/// response also says `nosniff`).
enum PhotoContentType {
    static func of(_ bytes: [UInt8]) -> String {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        // ISO base media file: a box size, then "ftyp" and the major brand.
        if starts(Array("ftyp".utf8), at: 4) {
            for brand in ["heic", "heix", "heim", "heis", "mif1", "msf1"] where starts(Array(brand.utf8), at: 8) { return "image/heic" }
        }
        return "application/octet-stream"
    }
}
