package import Foundation
package import RoostArchive
import RoostCore

/// How `roost serve` (or `[serve]` in `roost run`) serves the archive.
package struct ServeOptions: Sendable {
    package var archivePath: String
    /// An IP address; anything but loopback needs `allowRemote`.
    package var host: String = "127.0.0.1"
    /// 0: any free port.
    package var port: UInt16 = ServeOptions.defaultPort
    package var allowRemote = false
    /// Host names accepted in the `Host` header besides IP addresses and `localhost`.
    package var hostNames: [String] = []
    package var timeZone: TimeZone = .current
    /// The account search keeps to, as `roost search` does (`--account`, else `default_account`); nil: every account.
    package var account: String?
    /// Makes the smaller copies of large pictures that pages show (nil: pictures are sent whole).
    package var thumbnails: (any ThumbnailMaker)?
    /// How many connections are taken, from whom, for how long.
    package var limits = ConnectionLimits()
    /// Where refused requests, failures and (verbose) every request are told.
    package var log: ServeLog
    /// The agent's archive writer when the web view runs in `roost run` (`[serve]`): mark-read goes through it. Nil
    /// for `roost serve`, which opens the archive's writer for each mark-read.
    package var writer: ArchiveWriter?
    /// Acts on the link of a push notification's button (`POST /act/TOKEN`, taken without the session cookie: the token
    /// is its own authority), on a worker thread; nil: such links are not served (404).
    package var pushAction: (@Sendable (String) -> PushActionAnswer)?

    package static let defaultPort: UInt16 = 8765

    package init(archivePath: String, log: ServeLog) {
        self.archivePath = archivePath
        self.log = log
    }

    /// Whether `host` only reaches this machine.
    package static func isLoopback(_ host: String) -> Bool {
        host == "::1" || host.hasPrefix("127.")
    }
}

/// What `POST /act/TOKEN` answers: the HTTP status (200 done; 4xx the token refused; 5xx accepted but not done) and a line.
package struct PushActionAnswer: Sendable {
    package var status: Int
    package var text: String

    package init(status: Int, text: String) {
        self.status = status
        self.text = text
    }
}

/// Lines for the log of the command serving: the caller decides where they go and what is shown.
package struct ServeLog: Sendable {
    package var info: @Sendable (String) -> Void
    package var warning: @Sendable (String) -> Void
    package var debug: @Sendable (String) -> Void

    package init(info: @escaping @Sendable (String) -> Void, warning: @escaping @Sendable (String) -> Void,
                 debug: @escaping @Sendable (String) -> Void) {
        self.info = info
        self.warning = warning
        self.debug = debug
    }
}

/// The local web view of the archive: libsoup's HTTP server on a GLib main loop of its own thread, reading
/// the archive through its own read-only connection (so it works whether or not the agent runs, and never
/// blocks it), with live updates woken by changes of the archive's write-ahead log. See docs/serve.md.
package final class WebServer: Sendable {
    /// The address with the access token: what the user opens.
    package let url: String
    /// The address without the token, for logs.
    package let baseURL: String
    private let thread: GMainThread
    private let app: AppBox

    /// Only touched on `thread`.
    private final class AppBox: @unchecked Sendable {
        var app: WebApp?
    }

    private init(url: String, baseURL: String, thread: GMainThread, app: AppBox) {
        self.url = url
        self.baseURL = baseURL
        self.thread = thread
        self.app = app
    }

    /// Opens the archive and starts listening.
    package static func start(_ options: ServeOptions) async throws(ServeError) -> WebServer {
        if !ServeOptions.isLoopback(options.host) && !options.allowRemote { throw .remoteNotAllowed(options.host) }
        let reader: ArchiveReader
        do { reader = try ArchiveReader(path: options.archivePath) } catch { throw .archive(error) }
        let thread = GMainThread(name: "roost-serve")
        let box = AppBox()
        let result: Result<UInt16, ServeError> = await withCheckedContinuation { continuation in
            thread.run {
                do throws(ServeError) {
                    let app = try WebApp(options: options, reader: reader, thread: thread)
                    box.app = app
                    continuation.resume(returning: .success(app.port))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        let port: UInt16
        switch result {
        case .success(let bound): port = bound
        case .failure(let error):
            thread.stop()
            throw error
        }
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        let base = "http://\(host == "0.0.0.0" || host == "[::]" ? "127.0.0.1" : host):\(port)/"
        return WebServer(url: base + "?token=" + (await token(box, thread)), baseURL: base, thread: thread, app: box)
    }

    private static func token(_ box: AppBox, _ thread: GMainThread) async -> String {
        await withCheckedContinuation { continuation in
            thread.run { continuation.resume(returning: box.app?.access.token ?? "") }
        }
    }

    /// Stops accepting connections, cancels the workers (picture copies, exports, mark-read commits) and waits
    /// for them, closes every connection, frees the view and ends the thread: nothing a worker hands back can reach
    /// a freed object. Returns once the view is freed — a caller that then exits the process (`roost serve`) never
    /// races its deinitialisers (a crash the suite's core dumps caught).
    package func stop() async {
        let box = app
        let thread = self.thread
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            thread.run {
                guard let app = box.app else { return continuation.resume() }
                app.stop {
                    box.app = nil
                    // This closure and `app` above still hold the view: the answer goes after this turn of the loop,
                    // when the last reference is gone and the view freed.
                    thread.run { continuation.resume() }
                }
            }
        }
        thread.stop()
    }

    /// What the view did so far (for tests and the stop line): requests answered and refused, connections refused
    /// for being over a limit and closed for sending no whole request in time.
    package struct Counters: Sendable {
        package var served = 0
        package var refused = 0
        package var connectionsRefused = 0
        package var connectionsTimedOut = 0
    }

    package func counters() async -> Counters {
        let box = app
        return await withCheckedContinuation { continuation in
            thread.run {
                guard let app = box.app else { return continuation.resume(returning: Counters()) }
                let connections = app.connectionCounts
                continuation.resume(returning: Counters(served: app.served, refused: app.refused,
                                                        connectionsRefused: connections.refused, connectionsTimedOut: connections.timedOut))
            }
        }
    }
}
