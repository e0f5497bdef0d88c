import Foundation
internal import COpenSSL

/// The encryption of `roost backup --encrypt` (docs/backup.md, "Encrypted backups"): the whole tar, streamed in
/// chunks of 1 MiB, each sealed on its own with AES-256-GCM under a key derived from the passphrase by scrypt.
///
/// File: a 40-byte header — `ROOSTENC`, version 1, scrypt's log2 N, r and p (one byte each), a 16-byte random
/// salt, a 12-byte random nonce base — then the chunks, each its ciphertext followed by a 16-byte tag. A chunk's
/// nonce is the base XOR (its number, 8 bytes big-endian, in bytes 3…10; byte 11 set to 1 on the last chunk),
/// and the header is every chunk's additional data. So a chunk moved, dropped, repeated or taken from another
/// backup fails its tag, and so does a file cut at a chunk boundary: the last chunk left is not marked last.
/// Every chunk but the last holds exactly 1 MiB of plaintext; the last holds less (possibly nothing).
struct BackupCipher {
    static let magic = Array("ROOSTENC".utf8)
    static let headerSize = 40
    static let chunkSize = 1 << 20
    static let tagSize = 16
    /// scrypt: N = 2^15, r = 8, p = 1 (32 MiB, about 0.1 s here), the parameters OpenSSL's documentation suggests.
    static let logN: UInt8 = 15, r: UInt8 = 8, p: UInt8 = 1

    let header: [UInt8]
    private let key: [UInt8]
    private let nonceBase: [UInt8]

    /// A new header (random salt and nonce base) for `passphrase`.
    init(newFor passphrase: String) throws(BackupError) {
        var salt = [UInt8](repeating: 0, count: 16), nonce = [UInt8](repeating: 0, count: 12)
        guard RAND_bytes(&salt, 16) == 1, RAND_bytes(&nonce, 12) == 1 else { throw .crypto("no random bytes") }
        try self.init(header: Self.magic + [1, Self.logN, Self.r, Self.p] + salt + nonce, passphrase: passphrase)
    }

    /// The cipher of an existing backup, from its header.
    init(header: [UInt8], passphrase: String) throws(BackupError) {
        guard header.count == Self.headerSize, Array(header.prefix(8)) == Self.magic else { throw .damaged("not an encrypted Roost backup") }
        guard header[8] == 1 else { throw .unsupportedVersion(Int(header[8])) }
        let (logN, r, p) = (header[9], header[10], header[11])
        // Bounded, so a damaged or hostile header cannot ask for gigabytes.
        guard (10...20).contains(logN), (1...16).contains(r), (1...4).contains(p) else { throw .damaged("the encryption header's scrypt parameters are out of range") }
        let salt = Array(header[12..<28])
        var key = [UInt8](repeating: 0, count: 32)
        let password = Array(passphrase.utf8)
        let ok = EVP_PBE_scrypt(password, password.count, salt, salt.count, UInt64(1) << UInt64(logN), UInt64(r), UInt64(p),
                                1 << 30, &key, key.count)
        guard ok == 1 else { throw .crypto("scrypt failed") }
        self.header = header
        self.key = key
        self.nonceBase = Array(header[28..<40])
    }

    static func isEncrypted(_ prefix: [UInt8]) -> Bool { prefix.count >= 8 && Array(prefix.prefix(8)) == magic }

    private func nonce(_ index: UInt64, last: Bool) -> [UInt8] {
        var nonce = nonceBase
        for i in 0..<8 { nonce[3 + i] ^= UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(i))) }
        if last { nonce[11] ^= 1 }
        return nonce
    }

    /// Ciphertext and tag of chunk number `index`.
    func seal(_ plain: ArraySlice<UInt8>, index: UInt64, last: Bool) throws(BackupError) -> [UInt8] {
        guard let context = EVP_CIPHER_CTX_new() else { throw .crypto("out of memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: plain.count + Self.tagSize)
        var length: Int32 = 0
        var tail: Int32 = 0
        let nonce = nonce(index, last: last)
        let ok = EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1
            && EVP_EncryptUpdate(context, nil, &length, header, Int32(header.count)) == 1
            && plain.withUnsafeBufferPointer { EVP_EncryptUpdate(context, &out, &length, $0.baseAddress, Int32(plain.count)) } == 1
            && out.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(context, $0.baseAddress! + Int(length), &tail) } == 1
            && out.withUnsafeMutableBufferPointer {
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(Self.tagSize), $0.baseAddress! + plain.count)
            } == 1
        guard ok else { throw .crypto("encryption failed") }
        return out
    }

    /// The plaintext of chunk number `index`; throws when its tag does not match (wrong passphrase, damage,
    /// a chunk out of place, or a last chunk that is not the last).
    func open(_ sealed: ArraySlice<UInt8>, index: UInt64, last: Bool) throws(BackupError) -> [UInt8] {
        guard sealed.count >= Self.tagSize, let context = EVP_CIPHER_CTX_new() else { throw .damaged("an encrypted chunk is cut short") }
        defer { EVP_CIPHER_CTX_free(context) }
        let size = sealed.count - Self.tagSize
        var out = [UInt8](repeating: 0, count: size + Self.tagSize)
        var length: Int32 = 0
        var tail: Int32 = 0
        var tag = Array(sealed.suffix(Self.tagSize))
        let nonce = nonce(index, last: last)
        let ok = EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1
            && EVP_DecryptUpdate(context, nil, &length, header, Int32(header.count)) == 1
            && sealed.withUnsafeBufferPointer { EVP_DecryptUpdate(context, &out, &length, $0.baseAddress, Int32(size)) } == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagSize), &tag) == 1
            && out.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(context, $0.baseAddress! + Int(length), &tail) } == 1
        guard ok else {
            throw index == 0 ? .wrongPassphrase : .damaged("encrypted chunk \(index) fails its authentication (damaged, cut short or reordered)")
        }
        return Array(out.prefix(size))
    }
}

/// Where a backup's bytes come from: the file itself, or its chunks decrypted one at a time.
final class BackupByteSource {
    private let fd: Int32
    private let path: String
    private let cipher: BackupCipher?
    private var plain: [UInt8] = []
    private var offset = 0
    private var index: UInt64 = 0
    private var ended = false
    private var sealed = [UInt8](repeating: 0, count: BackupCipher.chunkSize + BackupCipher.tagSize)

    /// Reads the file's first bytes: an encrypted backup needs `passphrase` (nil: `.passphraseNeeded`).
    init(fd: Int32, path: String, passphrase: () throws(BackupError) -> String?) throws(BackupError) {
        self.fd = fd
        self.path = path
        var first = [UInt8](repeating: 0, count: BackupCipher.headerSize)
        let got = try Self.read(fd, into: &first, count: first.count, path: path)
        if got == first.count, BackupCipher.isEncrypted(first) {
            guard let passphrase = try passphrase() else { throw .passphraseNeeded }
            cipher = try BackupCipher(header: first, passphrase: passphrase)
        } else {
            cipher = nil
            plain = Array(first.prefix(got))
        }
    }

    var isEncrypted: Bool { cipher != nil }

    /// Up to `count` bytes into `buffer` at `at`; 0 at the end.
    func read(into buffer: inout [UInt8], at start: Int, count: Int) throws(BackupError) -> Int {
        if offset == plain.count {
            plain.removeAll(keepingCapacity: true)
            offset = 0
            if let cipher {
                guard !ended else { return 0 }
                let got = try Self.read(fd, into: &sealed, count: sealed.count, path: path)
                // A full chunk is never the last; a shorter one must be, with nothing after it.
                let last = got < sealed.count
                guard got > 0 else { throw .damaged("the file ends before its last encrypted chunk (truncated)") }
                plain = try cipher.open(sealed[0..<got], index: index, last: last)
                index += 1
                ended = last
            } else {
                let n = try Self.read(fd, into: &buffer, at: start, count: count, path: path)
                return n
            }
        }
        let n = min(count, plain.count - offset)
        buffer.replaceSubrange(start..<(start + n), with: plain[offset..<(offset + n)])
        offset += n
        return n
    }

    /// Reads until `count` bytes or the end of the file.
    private static func read(_ fd: Int32, into buffer: inout [UInt8], at start: Int = 0, count: Int, path: String) throws(BackupError) -> Int {
        var total = 0
        while total < count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + start + total, count - total) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, operation: "read", errno: errno)
            }
            if n == 0 { break }
            total += n
        }
        return total
    }
}
