import Foundation
internal import CCurl
import RoostHTTP

/// Bytes of a transfer so far, for a progress bar (also sent over the control socket).
public struct TransferProgress: Codable, Sendable, Equatable {
    public var done: Int64
    public var total: Int64

    public init(done: Int64, total: Int64) {
        self.done = done
        self.total = total
    }
}

/// The HTTP PUT of XEP-0363: sends a file to the slot's URL with the slot's headers, through libcurl, with
/// the account's TLS trust. (The URL comes from the user's own server, so no private-address rule applies.)
struct FileUploader {
    let trust: HTTPTrust

    /// Uploads `size` bytes from `path`; `progress` is told the bytes sent, a few times a second.
    func put(path: String, size: Int64, contentType: String, to url: String, headers: [(String, String)],
             progress: (@Sendable (TransferProgress) -> Void)?) throws(ActionFailure) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "https" || scheme == "http", let host = components.host else {
            throw ActionFailure(.refused, "the upload service gave an unusable upload URL")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ActionFailure(.internalError, "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let easy: CurlEasy
        do { easy = try CurlEasy() } catch { throw ActionFailure(.internalError, "libcurl could not start a transfer: \(error)") }
        easy.set(CURLOPT_URL, url)
        easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_FOLLOWLOCATION, 0)
        easy.set(CURLOPT_CONNECTTIMEOUT, 20)
        easy.set(CURLOPT_LOW_SPEED_LIMIT, 1)
        easy.set(CURLOPT_LOW_SPEED_TIME, 60)
        easy.set(CURLOPT_USERAGENT, "Roost")
        // PUT is what CURLOPT_UPLOAD does over HTTP; no "Expect: 100-continue" round trip.
        easy.setUpload(fileDescriptor: fd, size: size)
        easy.set(CURLOPT_HTTPHEADER, list: ["Content-Type: \(contentType)", "Expect:"] + headers.map { "\($0.0): \($0.1)" })
        let pin = trust.apply(to: easy, host: host)
        if let progress {
            var last = Date.distantPast
            easy.onProgress { _, uploaded, _ in
                let now = Date()
                if now.timeIntervalSince(last) >= 0.1 || uploaded == size {
                    last = now
                    progress(TransferProgress(done: uploaded, total: size))
                }
                return true
            }
        }
        let error = easy.perform()
        withExtendedLifetime(pin) {}
        if let error { throw ActionFailure(.connection, "uploading to \(host) failed: \(error)") }
        let status = easy.responseCode
        guard (200..<300).contains(status) else {
            let meaning = switch status {
            case 413: "the file is too large for the server"
            case 401, 403: "the server refused the upload slot (it may have expired)"
            case 507: "the server is out of space or your quota is exhausted"
            default: "HTTP \(status)"
            }
            throw ActionFailure(.refused, "uploading to \(host) failed: \(meaning)")
        }
        progress?(TransferProgress(done: size, total: size))
    }
}
