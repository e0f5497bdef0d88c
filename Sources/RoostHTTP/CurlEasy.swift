package import Foundation
package import CCurl
package import RoostCore

/// Owns one libcurl easy handle and what it points to (header lists, upload source, callbacks) for one
/// blocking transfer. Shared by the notification sinks (webhooks, mail) and file transfers (downloads,
/// XEP-0363 uploads), so there is one place where Roost talks to libcurl.
///
/// Callbacks run on the thread calling `perform`; they receive this object as their user pointer, which is
/// why it must stay alive (it does: `perform` is a method on it) for the whole transfer.
package final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    private var upload: CurlUpload?
    private var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    private var dataHandler: ((UnsafeRawBufferPointer) -> Bool)?
    private var headerHandler: ((String) -> Bool)?
    private var progressHandler: ((_ downloaded: Int64, _ uploaded: Int64, _ uploadTotal: Int64) -> Bool)?
    private var contextHandler: ((UnsafeMutableRawPointer) -> Bool)?
    /// libcurl's result code of the last `perform`.
    package private(set) var resultCode = CURLE_OK

    private static let globalInit: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    /// Throws when libcurl (opened on first use) is missing, or gives no handle.
    package init() throws(LibraryLoadError) {
        try LibraryLoadError.check("libcurl.so.4", roost_curl_load())
        _ = Self.globalInit
        guard let handle = curl_easy_init() else {
            throw LibraryLoadError(library: "libcurl.so.4", reason: "curl_easy_init gave no handle")
        }
        self.handle = handle
        roost_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        roost_curl_setopt_write_function(handle) { _, size, count, _ in size * count }
    }

    deinit {
        curl_easy_cleanup(handle)
        for list in lists { curl_slist_free_all(list) }
    }

    package func set(_ option: CURLoption, _ value: Int) {
        roost_curl_setopt_long(handle, option, value)
    }

    package func set(_ option: CURLoption, _ value: String) {
        // CURLOPT strings are copied by libcurl (since 7.17), so a temporary C string is enough.
        roost_curl_setopt_string(handle, option, value)
    }

    package func set(_ option: CURLoption, size value: Int64) {
        roost_curl_setopt_off_t(handle, option, curl_off_t(value))
    }

    package func set(_ option: CURLoption, list values: [String]) {
        var list: UnsafeMutablePointer<curl_slist>?
        for value in values {
            list = curl_slist_append(list, value)
        }
        if let list { lists.append(list) }
        roost_curl_setopt_slist(handle, option, list)
    }

    /// POST data, copied by libcurl.
    package func setPostBody(_ data: Data) {
        set(CURLOPT_POSTFIELDSIZE, data.count)
        data.withUnsafeBytes { bytes in
            _ = roost_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
        }
    }

    /// Data sent by an upload (the mail for SMTP).
    package func setUpload(_ data: Data) {
        setUpload(CurlUpload(data: data), size: Int64(data.count))
    }

    /// Sends `size` bytes read from the open file `descriptor` (an HTTP PUT with `CURLOPT_UPLOAD`).
    package func setUpload(fileDescriptor descriptor: Int32, size: Int64) {
        setUpload(CurlUpload(fileDescriptor: descriptor), size: size)
    }

    private func setUpload(_ upload: CurlUpload, size: Int64) {
        self.upload = upload
        set(CURLOPT_UPLOAD, 1)
        set(CURLOPT_INFILESIZE_LARGE, size: size)
        roost_curl_setopt_read_function(handle) { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            let upload = Unmanaged<CurlUpload>.fromOpaque(context).takeUnretainedValue()
            return upload.read(into: buffer, capacity: size * count)
        }
        roost_curl_setopt_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(upload).toOpaque())
    }

    /// Receives the response body in chunks; returning false aborts the transfer (`CURLE_WRITE_ERROR`).
    package func onData(_ handler: @escaping (UnsafeRawBufferPointer) -> Bool) {
        dataHandler = handler
        roost_curl_setopt_write_function(handle) { data, size, count, context in
            guard let context else { return 0 }
            let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
            return easy.dataHandler?(bytes) == false ? 0 : size * count
        }
        roost_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Receives each response header line (status lines included, CRLF removed); false aborts.
    package func onHeader(_ handler: @escaping (String) -> Bool) {
        headerHandler = handler
        roost_curl_setopt_header_function(handle) { data, size, count, context in
            guard let context, let data else { return 0 }
            let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
            let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
            return easy.headerHandler?(line) == false ? 0 : size * count
        }
        roost_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Called often during the transfer (also when idle); false aborts (`CURLE_ABORTED_BY_CALLBACK`).
    package func onProgress(_ handler: @escaping (_ downloaded: Int64, _ uploaded: Int64, _ uploadTotal: Int64) -> Bool) {
        progressHandler = handler
        set(CURLOPT_NOPROGRESS, 0)
        roost_curl_setopt_xferinfo_function(handle) { context, _, downloaded, uploadTotal, uploaded in
            guard let context else { return 0 }
            let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
            return easy.progressHandler?(Int64(downloaded), Int64(uploaded), Int64(uploadTotal)) == false ? 1 : 0
        }
        roost_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gets the OpenSSL `SSL_CTX *` before each TLS connection, to adjust its verification; false fails it.
    package func onTLSContext(_ handler: @escaping (UnsafeMutableRawPointer) -> Bool) {
        contextHandler = handler
        roost_curl_setopt_ssl_ctx_function(handle) { _, context, user in
            guard let context, let user else { return CURLE_SSL_CERTPROBLEM }
            let easy = Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue()
            return easy.contextHandler?(context) == false ? CURLE_SSL_CERTPROBLEM : CURLE_OK
        }
        roost_curl_setopt_pointer(handle, CURLOPT_SSL_CTX_DATA, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Runs the transfer; returns libcurl's error text (a host or a server reply, never a secret) on failure.
    package func perform() -> String? {
        errorText = nil
        errorBuffer.withUnsafeMutableBufferPointer { buffer in
            _ = roost_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            let code = curl_easy_perform(handle)
            resultCode = code
            _ = roost_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, nil)
            buffer[buffer.count - 1] = 0
            if code != CURLE_OK {
                let detail = String(cString: buffer.baseAddress!)
                errorText = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            }
        }
        return errorText
    }

    private var errorText: String?

    package var responseCode: Int {
        var code = 0
        roost_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// A string-valued transfer detail (e.g. `CURLINFO_PRIMARY_IP`), valid during and after a transfer.
    package func info(_ item: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard roost_curl_getinfo_string(handle, item, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

/// Where an upload's bytes come from (memory or an open file) and how far libcurl has read them.
final class CurlUpload {
    private let data: Data?
    private let descriptor: Int32
    private var offset = 0

    init(data: Data) {
        self.data = data
        descriptor = -1
    }

    /// Reads from `descriptor`, which the caller keeps open (and closes) around the transfer.
    init(fileDescriptor: Int32) {
        data = nil
        descriptor = fileDescriptor
    }

    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        guard let data else {
            while true {
                let n = Glibc.read(descriptor, buffer, capacity)
                if n < 0 && errno == EINTR { continue }
                return n < 0 ? Int(CURL_READFUNC_ABORT) : n
            }
        }
        let count = min(capacity, data.count - offset)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}
