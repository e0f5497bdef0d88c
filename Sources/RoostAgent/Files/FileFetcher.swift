import Foundation
internal import CCurl
import RoostArchive
import RoostHTTP

/// Downloads one attachment into the file store through libcurl, with every defence a URL from a stranger
/// needs: only http and https (and `aesgcm://`, fetched over https); the host resolved and checked by
/// `AddressGuard` (unless private addresses are allowed), the connection pinned to the checked addresses and
/// the connected one checked again; redirects followed here, at most `maxRedirects`, each one checked the same
/// way; TLS verified with the account's trust (`HTTPTrust`); no proxy from the environment (it would bypass
/// the address check), no cookies; the size checked against `Content-Length` and while streaming; the bytes
/// hashed while written and kept only when they match advertised hashes. Blocking: runs on the download worker.
struct FileFetcher {
    struct Limits: Sendable {
        var maxSize: Int64
        var allowPrivateAddresses: Bool
        var maxRedirects = 5
        var connectTimeoutSeconds = 20
        /// The whole fetch, redirects included, ends after this long ("timeout", retried later).
        var maxTransferSeconds = 1800
        /// A transfer slower than `minRate` bytes a second over `minRateSeconds` ends ("too-slow", retried later).
        var minRate: Int64 = 1024
        var minRateSeconds = FilesSettings.minRateSeconds
        /// The bytes the quotas and the free-space floor leave for this file: more is refused ("quota").
        var budget: Int64 = .max
    }

    enum Outcome: Equatable {
        case stored(StoredFile, mime: String?)
        case tooLarge
        /// Not to be tried again: `scheme`, `private-address`, `hash-mismatch`, `redirects`.
        case refused(String)
        /// `retry`: worth trying again later (the server or network may come back).
        case failed(String, retry: Bool)
        /// Stopped because the worker is stopping; nothing changes.
        case cancelled
    }

    let limits: Limits
    let trust: HTTPTrust
    let store: FileStore
    let isCancelled: @Sendable () -> Bool

    func fetch(_ attachment: AttachmentRecord) -> Outcome {
        var url = attachment.url
        var decryptor: AESGCMFile?
        if url.lowercased().hasPrefix("aesgcm:") {
            guard let link = AESGCMFile.parse(url), let cipher = AESGCMFile(key: link.key, iv: link.iv) else { return .refused("invalid-aesgcm-link") }
            url = link.https
            decryptor = cipher
        }
        let deadline = ContinuousClock.now + .seconds(limits.maxTransferSeconds)
        for _ in 0...limits.maxRedirects {
            guard ContinuousClock.now < deadline else { return .failed("timeout", retry: true) }
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                  scheme == "http" || scheme == "https" else { return .refused("scheme") }
            guard let host = components.host, !host.isEmpty else { return .refused("scheme") }
            let port = components.port ?? (scheme == "https" ? 443 : 80)
            let addresses: [AddressGuard.Address]
            switch AddressGuard.resolve(host: host, port: port, allowPrivate: limits.allowPrivateAddresses) {
            case .addresses(let found): addresses = found
            case .privateOnly: return .refused("private-address")
            case .failed: return .failed("dns", retry: true)
            }
            let step = transfer(url: url, host: host, port: port, addresses: addresses, hashes: attachment.hashes, decryptor: decryptor,
                                deadline: deadline)
            switch step {
            case .done(let outcome):
                return outcome
            case .redirect(let location):
                guard let next = URL(string: location, relativeTo: URL(string: url))?.absoluteString else { return .refused("redirects") }
                url = next
            }
        }
        return .refused("redirects")
    }

    private enum Step {
        case done(Outcome)
        case redirect(String)
    }

    /// What the header and data callbacks learn during one request.
    private final class Response {
        var status = 0
        var contentLength: Int64?
        var contentType: String?
        var location: String?
        var received: Int64 = 0
        var addressChecked = false
        var stop: Outcome?
    }

    private func transfer(url: String, host: String, port: Int, addresses: [AddressGuard.Address], hashes: [FileHash],
                          decryptor: AESGCMFile?, deadline: ContinuousClock.Instant) -> Step {
        guard let easy = try? CurlEasy() else { return .done(.failed("libcurl", retry: true)) }
        let writer: FileStoreWriter
        do { writer = try store.writer(checking: hashes) } catch { return .done(.failed("disk", retry: true)) }
        let response = Response()
        let limits = self.limits
        let allowed = Set(addresses.map(\.bytes))
        easy.set(CURLOPT_URL, url)
        easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_FOLLOWLOCATION, 0)
        easy.set(CURLOPT_PROXY, "")
        easy.set(CURLOPT_CONNECTTIMEOUT, limits.connectTimeoutSeconds)
        // A sender's server that trickles (2 bytes a second) must not hold a download thread: a rate worth the name
        // over a window, and a deadline for the whole fetch.
        easy.set(CURLOPT_LOW_SPEED_LIMIT, Int(clamping: limits.minRate))
        easy.set(CURLOPT_LOW_SPEED_TIME, limits.minRateSeconds)
        let left = ContinuousClock.now.duration(to: deadline)
        easy.set(CURLOPT_TIMEOUT_MS, max(1, Int(left.components.seconds) * 1000 + Int(left.components.attoseconds / 1_000_000_000_000_000)))
        easy.set(CURLOPT_USERAGENT, "Roost")
        // The connection may only go to the addresses checked above: a second DNS answer is never used.
        let pinned = addresses.map { $0.isIPv6 ? "[\($0.text)]" : $0.text }.joined(separator: ",")
        easy.set(CURLOPT_RESOLVE, list: ["\(host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host):\(port):\(pinned)"])
        let pin = trust.apply(to: easy, host: host)
        easy.onHeader { line in
            if !response.addressChecked {
                response.addressChecked = true
                // Belt and braces: the address libcurl actually connected to is one that was checked.
                if !limits.allowPrivateAddresses, !(easy.info(CURLINFO_PRIMARY_IP).flatMap(AddressGuard.bytes(of:)).map(allowed.contains) ?? false) {
                    response.stop = .refused("private-address")
                    return false
                }
            }
            if line.hasPrefix("HTTP/") {
                response.status = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
                response.contentLength = nil
                response.contentType = nil
                response.location = nil
                return true
            }
            guard let colon = line.firstIndex(of: ":") else { return true }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "content-length":
                response.contentLength = Int64(value)
                if (200..<300).contains(response.status), let length = response.contentLength, length > limits.maxSize {
                    response.stop = .tooLarge
                    return false
                }
                if (200..<300).contains(response.status), let length = response.contentLength, length > limits.budget {
                    response.stop = .refused("quota")
                    return false
                }
            case "content-type": response.contentType = value
            case "location": response.location = value
            default: break
            }
            return true
        }
        easy.onData { bytes in
            guard (200..<300).contains(response.status) else { return true }
            response.received += Int64(bytes.count)
            if response.received > limits.maxSize {
                response.stop = .tooLarge
                return false
            }
            if response.received > limits.budget {
                response.stop = .refused("quota")
                return false
            }
            do {
                if let decryptor {
                    try decryptor.update(bytes) { plain in try writer.write(plain, count: plain.count) }
                } else {
                    try writer.write(bytes)
                }
            } catch {
                response.stop = .failed("disk", retry: true)
                return false
            }
            return true
        }
        easy.onProgress { _, _, _ in !isCancelled() }
        let error = easy.perform()
        withExtendedLifetime(pin) {}
        if let stop = response.stop {
            writer.discard()
            return .done(stop)
        }
        if error != nil {
            writer.discard()
            // libcurl says "timed out" for the deadline and for the minimum rate alike: the clock tells them apart.
            if easy.resultCode == CURLE_OPERATION_TIMEDOUT, response.status != 0, ContinuousClock.now < deadline - .seconds(1) {
                return .done(.failed("too-slow", retry: true))
            }
            return .done(Self.failure(easy.resultCode))
        }
        switch response.status {
        case 200..<300:
            if let decryptor {
                let intact = (try? decryptor.finish { plain in try writer.write(plain, count: plain.count) }) ?? false
                guard intact else {
                    writer.discard()
                    return .done(.failed("decrypt", retry: false))
                }
            }
            do {
                let file = try writer.commit()
                return .done(.stored(file, mime: MediaType.normalized(response.contentType)))
            } catch .hashMismatch {
                return .done(.refused("hash-mismatch"))
            } catch {
                return .done(.failed("disk", retry: true))
            }
        case 301, 302, 303, 307, 308:
            writer.discard()
            guard let location = response.location else { return .done(.failed("http-\(response.status)", retry: false)) }
            return .redirect(location)
        default:
            writer.discard()
            let status = response.status
            return .done(.failed("http-\(status)", retry: status == 408 || status == 425 || status == 429 || status >= 500))
        }
    }

    /// libcurl's failure as a short reason, and whether trying later may help.
    static func failure(_ code: CURLcode) -> Outcome {
        switch code {
        case CURLE_ABORTED_BY_CALLBACK: return .cancelled
        case CURLE_OPERATION_TIMEDOUT: return .failed("timeout", retry: true)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST: return .failed("connect", retry: true)
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .failed("interrupted", retry: true)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CONNECT_ERROR:
            return .failed("tls", retry: true)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: return .refused("scheme")
        default: return .failed("transfer", retry: true)
        }
    }

    /// A URL fit for a log: no user name or password (`http://user:pw@host/`), no query (upload tokens) and no
    /// fragment (an aesgcm key).
    static func loggable(_ url: String) -> String {
        var text = Substring(url)
        if let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<cut] }
        if let scheme = text.range(of: "://") {
            let authority = text[scheme.upperBound...].prefix { $0 != "/" && $0 != "\\" }
            if let at = authority.lastIndex(of: "@") { text = text[..<scheme.upperBound] + text[text.index(after: at)...] }
        }
        return String(text)
    }
}
