import Foundation
import RoostCore
import RoostXMPP
import Synchronization

/// The single-use, expiring, signed links a push notification (ntfy `http` actions, a JSON webhook's `actions`) carries
/// for Mark read and Accept/Deny, and their check when `roost serve` is asked to act on one (docs/serve.md, "Push actions").
///
/// A token is `PAYLOAD.SIGNATURE`: PAYLOAD the base64url JSON of what it allows — one action (`read`, `accept`, `deny`)
/// on one conversation or contact (`target`) of one account, until `expires` (milliseconds since 1970), with a random
/// `nonce` — and SIGNATURE the base64url HMAC-SHA256 of PAYLOAD under a key of 32 random bytes kept beside the archive
/// (`push-actions.key`, mode 0600, made at first use). A token accepted once is written to `push-actions-used` (its
/// nonce and expiry; expired ones are dropped) and refused after that.
package final class PushActionTokens: Sendable {
    package enum Action: String, Codable, Sendable, CaseIterable {
        case read, accept, deny
    }

    /// What a valid token allows.
    package struct Grant: Codable, Sendable, Equatable {
        package var action: Action
        package var account: String
        package var target: String
        /// Milliseconds since 1970.
        package var expires: Int64
        package var nonce: String
    }

    /// Why a token was refused, with the HTTP status that says so.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case malformed
        case badSignature
        case expired
        case used
        /// The key or the record of used tokens cannot be read or written.
        case unavailable(String)

        package var status: Int {
            switch self {
            case .malformed: 400
            case .badSignature: 403
            case .expired: 410
            case .used: 409
            case .unavailable: 503
            }
        }

        package var description: String {
            switch self {
            case .malformed: "not a push action token"
            case .badSignature: "the token's signature is wrong"
            case .expired: "the token has expired"
            case .used: "the token was already used"
            case .unavailable(let why): "push actions are unavailable: \(why)"
            }
        }
    }

    /// How long a link works.
    package static let lifetimeMilliseconds: Int64 = 24 * 3_600_000
    static let keyName = "push-actions.key"
    static let usedName = "push-actions-used"

    private let keyPath: String
    private let usedPath: String
    /// One check-and-record at a time in this process (`flock` keeps other processes out).
    private let lock = Mutex<Void>(())

    /// `directory`: the archive's folder.
    package init(directory: String) {
        keyPath = directory + "/" + Self.keyName
        usedPath = directory + "/" + Self.usedName
    }

    /// A token for `action` on `target` of `account`, valid `lifetime` milliseconds from now; nil when no key can be
    /// read or made.
    package func sign(_ action: Action, account: String, target: String, lifetime: Int64 = PushActionTokens.lifetimeMilliseconds) -> String? {
        guard let key = try? key(create: true) else { return nil }
        var nonce = [UInt8](repeating: 0, count: 16)
        var random = SystemRandomNumberGenerator()
        for index in nonce.indices { nonce[index] = random.next() }
        let grant = Grant(action: action, account: account, target: target, expires: Timestamp.now() + lifetime,
                          nonce: Self.base64url(nonce))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let json = try? encoder.encode(grant) else { return nil }
        let payload = Self.base64url(Array(json))
        guard let signature = try? HashAlgorithm.sha256.hmac(key: key, data: Array(payload.utf8)) else { return nil }
        return payload + "." + Self.base64url(signature)
    }

    /// What `token` allows when its signature is right and it has not expired; nothing is recorded (see `spend`).
    package func check(_ token: String) -> Result<Grant, Refusal> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let json = Self.decode(String(parts[0])), let signature = Self.decode(String(parts[1])) else {
            return .failure(.malformed)
        }
        let key: [UInt8]
        do { key = try self.key(create: false) } catch { return .failure(.unavailable(error.reason)) }
        guard let expected = try? HashAlgorithm.sha256.hmac(key: key, data: Array(parts[0].utf8)),
              Self.constantTimeEqual(expected, signature) else { return .failure(.badSignature) }
        guard let grant = try? JSONDecoder().decode(Grant.self, from: Data(json)) else { return .failure(.malformed) }
        guard grant.expires > Timestamp.now() else { return .failure(.expired) }
        return .success(grant)
    }

    /// Records a checked grant as used: `.used` when it already was (another call came first), so it is acted on once.
    package func spend(_ grant: Grant) -> Result<Grant, Refusal> {
        lock.withLock { _ in recordUse(grant, now: Timestamp.now()) }
    }

    // MARK: Files

    private struct KeyProblem: Error {
        let reason: String
    }

    private func key(create: Bool) throws(KeyProblem) -> [UInt8] {
        if let data = FileManager.default.contents(atPath: keyPath) {
            guard data.count == 32 else { throw KeyProblem(reason: "\(Self.keyName) is not 32 bytes") }
            return Array(data)
        }
        guard create else { throw KeyProblem(reason: "there is no \(Self.keyName) (no push action was ever signed)") }
        var key = [UInt8](repeating: 0, count: 32)
        var random = SystemRandomNumberGenerator()
        for index in key.indices { key[index] = random.next() }
        let fd = open(keyPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            // Made by another process meanwhile: read that one.
            if errno == EEXIST, let data = FileManager.default.contents(atPath: keyPath), data.count == 32 { return Array(data) }
            throw KeyProblem(reason: "\(Self.keyName) cannot be created: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == key.count, fsync(fd) == 0 else { throw KeyProblem(reason: "\(Self.keyName) cannot be written") }
        return key
    }

    /// Under an exclusive `flock` of the used file: refuses a nonce already there, else adds it (and drops the expired).
    private func recordUse(_ grant: Grant, now: Int64) -> Result<Grant, Refusal> {
        let fd = open(usedPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(.unavailable("\(Self.usedName) cannot be opened: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { return .failure(.unavailable("\(Self.usedName) cannot be locked")) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
        let text = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
        var kept: [String] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let expires = Int64(fields[1]) else { continue }
            if fields[0] == grant.nonce { return .failure(.used) }
            if expires > now { kept.append(String(line)) }
        }
        kept.append("\(grant.nonce) \(grant.expires)")
        let data = Data((kept.joined(separator: "\n") + "\n").utf8)
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0,
              (data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }) == data.count, fsync(fd) == 0 else {
            return .failure(.unavailable("\(Self.usedName) cannot be written"))
        }
        return .success(grant)
    }

    // MARK: Encoding

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
