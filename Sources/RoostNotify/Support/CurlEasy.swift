import Foundation
internal import CCurl

/// Owns one libcurl easy handle and the lists and upload data it points to, for one blocking transfer.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    private var upload: CurlUpload?
    private var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

    private static let globalInit: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    init?() {
        _ = Self.globalInit
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        roost_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        roost_curl_setopt_write_function(handle) { _, size, count, _ in size * count }
    }

    deinit {
        curl_easy_cleanup(handle)
        for list in lists { curl_slist_free_all(list) }
    }

    func set(_ option: CURLoption, _ value: Int) {
        roost_curl_setopt_long(handle, option, value)
    }

    func set(_ option: CURLoption, _ value: String) {
        // CURLOPT strings are copied by libcurl (since 7.17), so a temporary C string is enough.
        roost_curl_setopt_string(handle, option, value)
    }

    func set(_ option: CURLoption, list values: [String]) {
        var list: UnsafeMutablePointer<curl_slist>?
        for value in values {
            list = curl_slist_append(list, value)
        }
        if let list { lists.append(list) }
        roost_curl_setopt_slist(handle, option, list)
    }

    /// POST data, copied by libcurl.
    func setPostBody(_ data: Data) {
        set(CURLOPT_POSTFIELDSIZE, data.count)
        data.withUnsafeBytes { bytes in
            _ = roost_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
        }
    }

    /// Data sent by an upload (the mail for SMTP).
    func setUpload(_ data: Data) {
        let upload = CurlUpload(data)
        self.upload = upload
        set(CURLOPT_UPLOAD, 1)
        roost_curl_setopt_read_function(handle) { buffer, size, count, context in
            guard let buffer, let context else { return 0 }
            let upload = Unmanaged<CurlUpload>.fromOpaque(context).takeUnretainedValue()
            return upload.read(into: buffer, capacity: size * count)
        }
        roost_curl_setopt_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(upload).toOpaque())
    }

    /// Runs the transfer; returns libcurl's error text (a host or a server reply, never a secret) on failure.
    func perform() -> String? {
        errorBuffer.withUnsafeMutableBufferPointer { buffer in
            _ = roost_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            let code = curl_easy_perform(handle)
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

    var responseCode: Int {
        var code = 0
        roost_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }
}

/// The bytes of an upload and how far libcurl has read them.
final class CurlUpload {
    private let data: Data
    private var offset = 0

    init(_ data: Data) {
        self.data = data
    }

    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = min(capacity, data.count - offset)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}
