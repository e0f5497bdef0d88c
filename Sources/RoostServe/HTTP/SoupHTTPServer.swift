import Foundation
internal import CSoup
import RoostCore

/// libsoup's HTTP server, passing every request to one handler. Connections come from a `ConnectionGate`, which
/// accepts them within its limits and hands each to libsoup. Everything here runs on the `GMainThread` the server
/// was created on: libsoup attaches its sources to the thread-default main context of that thread.
final class SoupHTTPServer {
    private let server: UnsafeMutablePointer<SoupServer>
    private var handlerInstalled = false
    private(set) var gate: ConnectionGate!

    private final class Handler {
        let body: (HTTPExchange) -> Void
        init(_ body: @escaping (HTTPExchange) -> Void) { self.body = body }
    }

    /// Throws when libsoup (opened on first use, CSoup) is missing.
    init(limits: ConnectionLimits, thread: GMainThread, log: ServeLog) throws(ServeError) {
        do throws(LibraryLoadError) {
            try LibraryLoadError.check("libsoup-3.0.so.0", roost_soup_load())
        } catch {
            throw .library(error)
        }
        let made = roost_soup_server_new()!
        server = made
        gate = ConnectionGate(limits: limits, thread: thread, log: log) { stream, local, remote in
            var error: UnsafeMutablePointer<GError>?
            let done = soup_server_accept_iostream(made, UnsafeMutablePointer<GIOStream>(OpaquePointer(stream)), local, remote, &error) != 0
            if let error { g_error_free(error) }
            return done
        }
    }

    deinit {
        gate.stop()
        soup_server_disconnect(server)
        g_object_unref(server)
    }

    /// Listens on `host` (an IP address: `127.0.0.1`, `::1`, `0.0.0.0`) and `port` (0: any free port);
    /// returns the port bound.
    func listen(host: String, port: UInt16) throws(ServeError) -> UInt16 {
        try gate.listen(host: host, port: port)
    }

    /// Every request, whatever its path, goes to `body`. Each response closes its connection (`Connection:
    /// close`, which libsoup keeps to anyway without listeners of its own): no connection waits idle for another request.
    func handle(_ body: @escaping (HTTPExchange) -> Void) {
        precondition(!handlerInstalled, "one handler per server")
        handlerInstalled = true
        let gate = self.gate!
        let box = Unmanaged.passRetained(Handler({ exchange in
            gate.requestRead(remote: exchange.remoteKey)
            exchange.setHeader("Connection", "close")
            exchange.streamBacklogLimit = gate.limits.streamBacklogBytes
            exchange.dropConnection = { [weak gate] in gate?.drop(remote: $0) }
            body(exchange)
        })).toOpaque()
        soup_server_add_handler(server, nil, { _, message, _, query, data in
            guard let message, let data else { return }
            let handler = Unmanaged<Handler>.fromOpaque(data).takeUnretainedValue()
            handler.body(HTTPExchange(message, query: HTTPExchange.dictionary(query)))
        }, box, { data in
            if let data { Unmanaged<Handler>.fromOpaque(data).release() }
        })
    }

    /// Stops accepting connections (the listening socket is closed); those open go on.
    func stopAccepting() {
        gate.stopListening()
    }

    /// Closes the listening socket and every connection.
    func disconnect() {
        gate.stop()
        soup_server_disconnect(server)
    }
}

/// One request and its response (a libsoup `SoupServerMessage`, referenced while this object lives).
/// Only used on the server's thread.
final class HTTPExchange {
    private let message: OpaquePointer
    /// The decoded query string (`?a=1&b=2`).
    let query: [String: String]
    /// Set once libsoup is done with the message (sent, or the client went away).
    private(set) var finished = false
    private var onFinish: [() -> Void] = []
    /// A streamed body's bytes handed to libsoup and not yet written to the connection, and how many may wait.
    private(set) var backlog = 0
    var streamBacklogLimit = Int.max
    /// Ends the connection of the exchange whose remote address object is given (set by the server).
    var dropConnection: (UnsafeMutableRawPointer?) -> Void = { _ in }

    private final class Weak {
        weak var exchange: HTTPExchange?
        init(_ exchange: HTTPExchange) { self.exchange = exchange }
    }

    /// The server thread's main context: where the message's reference is given back.
    private let context: OpaquePointer?

    init(_ message: OpaquePointer, query: [String: String]) {
        self.message = message
        self.query = query
        context = g_main_context_ref_thread_default()
        g_object_ref(UnsafeMutableRawPointer(message))
        // "finished": sent, or given up. "disconnected": the connection went while the message was paused (libsoup then
        // drops it without "finished"); unpausing it after that is an error, so it counts as done as well.
        for signal in ["finished", "disconnected"] {
            roost_message_on_signal(message, signal, { _, data in
                guard let data, let exchange = Unmanaged<Weak>.fromOpaque(data).takeUnretainedValue().exchange else { return }
                exchange.markFinished()
            }, Unmanaged.passRetained(Weak(self)).toOpaque(), { data, _ in
                if let data { Unmanaged<Weak>.fromOpaque(data).release() }
            })
        }
    }

    private func markFinished() {
        guard !finished else { return }
        finished = true
        let callbacks = onFinish
        onFinish = []
        for callback in callbacks { callback() }
    }

    deinit {
        // The last reference to an exchange may go on any thread (a worker's or a task's closure that carried it
        // back); libsoup is not thread-safe (a message finalised off the server thread once crashed it), so the
        // unref runs on the server's thread — at once when this is that thread.
        g_main_context_invoke_full(context, G_PRIORITY_DEFAULT, { data in
            g_object_unref(data)
            return 0  // G_SOURCE_REMOVE
        }, UnsafeMutableRawPointer(message), nil)
        g_main_context_unref(context)
    }

    /// Runs `body` when the message is done (at once if it already is).
    func whenFinished(_ body: @escaping () -> Void) {
        if finished { body() } else { onFinish.append(body) }
    }

    var method: String { String(cString: soup_server_message_get_method(message)) }

    /// The decoded path of the request URI.
    var path: String {
        guard let uri = soup_server_message_get_uri(message), let path = g_uri_get_path(uri) else { return "/" }
        let raw = String(cString: path)
        return raw.removingPercentEncoding ?? raw
    }

    /// The first value of a request header.
    func header(_ name: String) -> String? {
        guard let headers = soup_server_message_get_request_headers(message),
              let value = soup_message_headers_get_one(headers, name) else { return nil }
        return String(cString: value)
    }

    /// The value of a cookie sent with the request (the `Cookie` header is a `;`-separated list).
    func cookie(_ name: String) -> String? {
        guard let header = header("Cookie"), let table = soup_header_parse_semi_param_list(header) else { return nil }
        return Self.dictionary(table, free: true)[name]
    }

    /// The request body as `application/x-www-form-urlencoded` fields.
    func formFields() -> [String: String] {
        guard let body = soup_server_message_get_request_body(message), let bytes = soup_message_body_flatten(body) else { return [:] }
        defer { g_bytes_unref(bytes) }
        var size = 0
        guard let data = g_bytes_get_data(bytes, &size), size > 0 else { return [:] }
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
        return Self.dictionary(soup_form_decode(text), free: true)
    }

    /// The peer's address, for logs.
    var remoteHost: String {
        soup_server_message_get_remote_host(message).map { String(cString: $0) } ?? "?"
    }

    func setHeader(_ name: String, _ value: String) {
        soup_message_headers_replace(soup_server_message_get_response_headers(message), name, value)
    }

    /// A complete response.
    func respond(status: Int, contentType: String, body: String) {
        var bytes = Array(body.utf8)
        soup_server_message_set_status(message, UInt32(status), nil)
        bytes.withUnsafeMutableBytes { raw in
            soup_server_message_set_response(message, contentType, SOUP_MEMORY_COPY, raw.baseAddress, gsize(raw.count))
        }
    }

    /// A complete response whose body is a file, mapped rather than read (attachments may be large).
    func respond(status: Int, contentType: String, file path: String) -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let mapped = g_mapped_file_new(path, 0, &error) else {
            if let error { g_error_free(error) }
            return false
        }
        defer { g_mapped_file_unref(mapped) }
        let bytes = g_mapped_file_get_bytes(mapped)
        defer { g_bytes_unref(bytes) }
        soup_server_message_set_status(message, UInt32(status), nil)
        soup_message_headers_set_content_type(soup_server_message_get_response_headers(message), contentType, nil)
        soup_message_body_append_bytes(soup_server_message_get_response_body(message), bytes)
        return true
    }

    /// Starts a response whose body follows in pieces (`append`), kept open until `complete`. The body is not
    /// kept once written, so a long stream does not grow.
    func startStream(contentType: String) {
        soup_server_message_set_status(message, 200, nil)
        let headers = soup_server_message_get_response_headers(message)
        soup_message_headers_set_content_type(headers, contentType, nil)
        soup_message_headers_set_encoding(headers, SOUP_ENCODING_CHUNKED)
        soup_message_body_set_accumulate(soup_server_message_get_response_body(message), 0)
        roost_message_on_wrote_body_data(message, { _, size, data in
            guard let data, let exchange = Unmanaged<Weak>.fromOpaque(data).takeUnretainedValue().exchange else { return }
            exchange.backlog = max(0, exchange.backlog - Int(size))
        }, Unmanaged.passRetained(Weak(self)).toOpaque(), { data, _ in
            if let data { Unmanaged<Weak>.fromOpaque(data).release() }
        })
    }

    /// Adds a piece to a streamed body and wakes the connection to write it. A reader that still leaves more than
    /// `streamBacklogLimit` bytes untaken is dropped (its connection ended), rather than kept in memory: false then.
    /// (The limit is on what waits before the piece: a reader that keeps up always gets the piece, however large.)
    @discardableResult
    func append(_ text: String) -> Bool {
        guard !finished else { return false }
        var bytes = Array(text.utf8)
        guard backlog <= streamBacklogLimit else {
            dropConnection(remoteKey)
            return false
        }
        backlog += bytes.count
        bytes.withUnsafeMutableBytes { raw in
            soup_message_body_append(soup_server_message_get_response_body(message), SOUP_MEMORY_COPY, raw.baseAddress, gsize(raw.count))
        }
        soup_server_message_unpause(message)
        return true
    }

    /// The remote address object libsoup was handed for this request's connection: what the `ConnectionGate` knows it by.
    var remoteKey: UnsafeMutableRawPointer? {
        soup_server_message_get_remote_address(message).map { UnsafeMutableRawPointer($0) }
    }

    /// Holds the response back until `resume` (the handler returns before the answer is ready).
    func pause() {
        soup_server_message_pause(message)
    }

    func resume() {
        guard !finished else { return }
        soup_server_message_unpause(message)
    }

    static func dictionary(_ table: OpaquePointer?, free: Bool = false) -> [String: String] {
        guard let table else { return [:] }
        defer { if free { g_hash_table_unref(table) } }
        var result: [String: String] = [:]
        var iterator = GHashTableIter()
        g_hash_table_iter_init(&iterator, table)
        var key: gpointer?
        var value: gpointer?
        while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
            guard let key, let value else { continue }
            result[String(cString: key.assumingMemoryBound(to: CChar.self))] = String(cString: value.assumingMemoryBound(to: CChar.self))
        }
        return result
    }
}
