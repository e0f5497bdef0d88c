import Foundation
import RoostArchive
import RoostCore

/// The web view's request handling. Lives on the server's `GMainThread` and is only touched there: every
/// request, live stream, file-change wake-up and finished export is handled on that one thread, in turn.
final class WebApp {
    let access: WebAccess
    let port: UInt16
    private(set) var served = 0
    private(set) var refused = 0
    /// Push action links refused (a bad, forged, expired or reused token, a method other than POST): each is logged
    /// with this count, so an attack that reached the server shows.
    private(set) var pushRefused = 0
    private var pushInFlight = 0
    private let options: ServeOptions
    private let server: SoupHTTPServer
    private let browser: ArchiveBrowser
    private let live: LiveHub
    private let exports: ExportJobs
    private let markReadRequests: MarkReadRequests
    private let previews: Previews?
    /// Every thread of the view's parts (previews, exports, mark-read commits): stopping waits for them.
    private let workers: ServerWorkers

    init(options: ServeOptions, reader: ArchiveReader, thread: GMainThread) throws(ServeError) {
        self.options = options
        server = try SoupHTTPServer(limits: options.limits, thread: thread, log: options.log)
        browser = ArchiveBrowser(reader: reader, links: WebLinks(previews: options.thumbnails != nil), timeZone: options.timeZone,
                                 account: options.account)
        port = try server.listen(host: options.host, port: options.port)
        access = WebAccess(port: port, hostNames: options.hostNames)
        let workers = ServerWorkers(thread: thread)
        self.workers = workers
        live = LiveHub(browser: browser, writer: options.writer, thread: thread, log: options.log)
        exports = ExportJobs(archivePath: options.archivePath, timeZone: options.timeZone, workers: workers, log: options.log)
        markReadRequests = MarkReadRequests(archivePath: options.archivePath, writer: options.writer, workers: workers, log: options.log)
        previews = options.thumbnails.map { Previews(maker: $0, workers: workers) }
        // The handler lives as long as libsoup's server, which this object owns: a weak reference is never needed
        // (the server's requests all run on this thread), but nothing is left to chance.
        server.handle { [weak self] exchange in self?.handle(exchange) }
    }

    /// Connections refused for being over a limit, and closed for sending no whole request in time.
    var connectionCounts: (refused: Int, timedOut: Int, open: Int) {
        (server.gate.refused, server.gate.timedOut, server.gate.openCount)
    }

    /// Stops: no new connection is accepted, live streams end, workers are cancelled and waited for; then the
    /// picture copies go and every connection is closed, and `then` runs (on the server's thread). Only then may
    /// this object be freed.
    func stop(then: @escaping () -> Void) {
        server.stopAccepting()
        live.stop()
        workers.stop { [self] in
            previews?.stop()
            server.disconnect()
            then()
        }
    }

    // MARK: Requests

    private func handle(_ exchange: HTTPExchange) {
        let method = exchange.method
        let path = exchange.path
        secureHeaders(exchange)
        guard access.hostAllowed(exchange.header("Host")) else {
            // Another name than this server's: DNS rebinding, or a page addressing us by a name we do not know.
            return refuse(exchange, status: 421, "Host header '\(exchange.header("Host") ?? "")' is not this server",
                          page: "This server answers only to its own address.")
        }
        if path.hasPrefix("/act/") { return pushAction(exchange, method: method, token: String(path.dropFirst("/act/".count))) }
        if let offered = exchange.query["token"] {
            guard method == "GET", access.tokenMatches(offered) else {
                return refuse(exchange, status: 403, "wrong access token", page: "This access token is not valid (roost serve makes a new one each start).")
            }
            // The same address without the token (so it leaves the address bar and the history). Not a redirect:
            // when the address was opened from another site or a file (`--open` forwards from one), a redirect
            // stays that navigation, and the browser withholds the SameSite=Strict cookie from it. A page that
            // moves on by itself starts a navigation of this site, which carries the cookie.
            let rest = exchange.query.filter { $0.key != "token" }.sorted { $0.key < $1.key }
                .map { "\(WebLinks.encode($0.key))=\(WebLinks.encode($0.value))" }.joined(separator: "&")
            exchange.setHeader("Set-Cookie", access.setCookieHeader)
            page(exchange, WebPages.forward(to: (Self.ownPath(path) ?? "/") + (rest.isEmpty ? "" : "?" + rest)))
            served += 1
            return
        }
        guard access.tokenMatches(exchange.cookie(access.cookieName)) else {
            return refuse(exchange, status: 403, "no access token",
                          page: "Open the address that roost serve printed (it carries the access token), or run roost serve --open.")
        }
        served += 1
        options.log.debug(Self.printable("\(method) \(path) from \(exchange.remoteHost)"))
        switch (method, path) {
        case ("GET", "/"), ("HEAD", "/"): list(exchange)
        case ("GET", "/c"), ("HEAD", "/c"): conversation(exchange)
        case ("GET", "/search"), ("HEAD", "/search"): search(exchange)
        case ("GET", "/events"): live.open(exchange)
        case ("GET", "/avatar"), ("HEAD", "/avatar"): avatar(exchange)
        case ("GET", "/static/roost.js"), ("HEAD", "/static/roost.js"):
            exchange.setHeader("Cache-Control", "no-cache")
            exchange.respond(status: 200, contentType: "text/javascript; charset=utf-8", body: WebAssets.script)
        case ("POST", "/export"): export(exchange)
        case (_, "/export"):
            exchange.setHeader("Allow", "POST")
            page(exchange, status: 405, WebPages.message(title: "Not allowed", text: "Exports are made with the form of a conversation page."))
        case ("POST", "/read"): markRead(exchange)
        case (_, "/read"):
            exchange.setHeader("Allow", "POST")
            page(exchange, status: 405, WebPages.message(title: "Not allowed", text: "Conversations are marked read with the button of their page."))
        case ("GET", _) where path.hasPrefix("/file/"), ("HEAD", _) where path.hasPrefix("/file/"): file(exchange, path: path)
        case ("GET", _) where path.hasPrefix("/preview/"), ("HEAD", _) where path.hasPrefix("/preview/"): file(exchange, path: path, preview: true)
        case ("GET", "/favicon.ico"): exchange.respond(status: 204, contentType: "text/plain", body: "")
        case ("GET", _), ("HEAD", _): page(exchange, status: 404, WebPages.message(title: "Not found", text: "There is no page at \(path)."))
        default:
            exchange.setHeader("Allow", "GET, HEAD")
            page(exchange, status: 405, WebPages.message(title: "Not allowed", text: "\(method) is not used here."))
        }
    }

    /// Every response: the policy, no sniffing, no referrer, no framing, nothing cached.
    private func secureHeaders(_ exchange: HTTPExchange) {
        exchange.setHeader("Content-Security-Policy", WebAssets.contentSecurityPolicy)
        exchange.setHeader("X-Content-Type-Options", "nosniff")
        exchange.setHeader("Referrer-Policy", "no-referrer")
        exchange.setHeader("X-Frame-Options", "DENY")
        exchange.setHeader("Cross-Origin-Opener-Policy", "same-origin")
        exchange.setHeader("Cross-Origin-Resource-Policy", "same-origin")
        exchange.setHeader("Cache-Control", "no-store")
    }

    private func refuse(_ exchange: HTTPExchange, status: Int, _ reason: String, page text: String) {
        refused += 1
        options.log.info(Self.printable("refused \(exchange.method) \(exchange.path) from \(exchange.remoteHost): \(reason)"))
        page(exchange, status: status, WebPages.message(title: "Not allowed", text: text))
    }

    /// A request's text in a log line: control characters (a decoded `%0A` in a path) cannot forge lines.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }

    private func page(_ exchange: HTTPExchange, status: Int = 200, _ html: String) {
        exchange.respond(status: status, contentType: "text/html; charset=utf-8", body: html)
    }

    private func failed(_ exchange: HTTPExchange, _ error: any Error) {
        options.log.warning("reading the archive failed: \(error)")
        page(exchange, status: 500, WebPages.message(title: "Archive error", text: "Reading the archive failed: \(error)"))
    }

    // MARK: Pages

    private func list(_ exchange: HTTPExchange) {
        do {
            let entries = try browser.conversations()
            if exchange.query["fragment"] == "1" {
                page(exchange, WebPages.listFragment(entries))
            } else {
                page(exchange, WebPages.list(entries, archive: options.archivePath))
            }
        } catch {
            failed(exchange, error)
        }
    }

    private func conversation(_ exchange: HTTPExchange) {
        guard let request = ConversationRequest(query: exchange.query) else {
            return page(exchange, status: 400, WebPages.message(title: "Bad address", text: "A conversation page needs its account (a) and address (j)."))
        }
        do {
            guard let transcript = try browser.transcript(accountID: request.accountID, jid: request.jid, position: request.position,
                                                         states: request.states, presence: request.presence) else {
                return page(exchange, status: 404, WebPages.message(title: "Not found", text: "The archive has no conversation with \(request.jid)."))
            }
            if exchange.query["fragment"] == "1" {
                // An older page for the script that loads while scrolling up: the events, and where to go next.
                exchange.setHeader("X-Roost-Older", transcript.older.map { request.url(.before($0)) } ?? "")
                page(exchange, transcript.html)
            } else {
                page(exchange, WebPages.conversation(transcript, request: request, formToken: access.formToken))
            }
        } catch {
            failed(exchange, error)
        }
    }

    private func search(_ exchange: HTTPExchange) {
        let query = exchange.query["q"] ?? ""
        let before = exchange.query["before"].flatMap { Int64($0) }
        guard !query.trimmingCharacters(in: .whitespaces).isEmpty else {
            return page(exchange, WebPages.search(query: query, results: nil, error: nil, before: nil))
        }
        do {
            let results = try browser.search(query, before: before)
            page(exchange, WebPages.search(query: query, results: results, error: nil, before: before, account: browser.account))
        } catch ArchiveError.query(let error) {
            // While typing (the script's `typing=1`) a query is often unfinished: the page saying where is the answer,
            // not a failed request.
            page(exchange, status: exchange.query["typing"] == "1" ? 200 : 400,
                 WebPages.search(query: query, results: nil, error: error, before: nil))
        } catch {
            failed(exchange, error)
        }
    }

    // MARK: Files

    /// `/file/MESSAGE/INDEX`: an attachment stored locally, found by ids (a path never comes from the request);
    /// `/preview/MESSAGE/INDEX`: what a page shows of it when it is a picture (a smaller copy when it is large).
    private func file(_ exchange: HTTPExchange, path: String, preview: Bool = false) {
        let parts = path.split(separator: "/")
        guard parts.count == 3, let message = Int64(parts[1]), let index = Int(parts[2]) else {
            return page(exchange, status: 404, WebPages.message(title: "Not found", text: "No such file."))
        }
        do {
            // Only what the pages link: a file in the `stored` state (a download in progress or refused is not served).
            guard let attachment = try browser.attachment(messageID: message, index: index), attachment.state == .stored,
                  let local = attachment.localPath else {
                return page(exchange, status: 404, WebPages.message(title: "Not found", text: "That file is not stored in the archive."))
            }
            let name = (URL(string: attachment.url)?.lastPathComponent ?? "file").removingPercentEncoding ?? "file"
            if preview, attachment.isImage, let previews, let sha256 = attachment.sha256 {
                return previews.serve(exchange, sha256: sha256, source: local, bytes: attachment.size ?? 0) { [self] file in
                    // A copy is a JPEG or PNG of gdk-pixbuf's making: its type is read from it.
                    serveFile(exchange, path: file, declaredType: file == local ? attachment.mime : nil, name: name)
                }
            }
            serveFile(exchange, path: local, declaredType: attachment.mime, name: name)
        } catch {
            failed(exchange, error)
        }
    }

    private func avatar(_ exchange: HTTPExchange) {
        guard let account = exchange.query["a"].flatMap({ Int64($0) }), let jid = exchange.query["j"] else {
            return page(exchange, status: 404, WebPages.message(title: "Not found", text: "No such picture."))
        }
        do {
            guard let path = try browser.avatarPath(accountID: account, jid: jid) else {
                return page(exchange, status: 404, WebPages.message(title: "Not found", text: "No picture is stored for \(jid)."))
            }
            serveFile(exchange, path: path, declaredType: nil, name: "avatar")
        } catch {
            failed(exchange, error)
        }
    }

    /// Images a browser shows inline; anything else (SVG and HTML included, which could run script) is a
    /// download, and every file response carries a sandboxing policy.
    private static let inlineTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"]

    private func serveFile(_ exchange: HTTPExchange, path: String, declaredType: String?, name: String) {
        var type = (declaredType ?? RasterImage.sniff(fileAt: path)?.mime ?? "application/octet-stream").lowercased()
        if let semicolon = type.firstIndex(of: ";") { type = String(type[..<semicolon]) }
        let inline = Self.inlineTypes.contains(type)
        exchange.setHeader("Content-Security-Policy", "default-src 'none'; sandbox")
        exchange.setHeader("Cache-Control", "private, max-age=3600")
        let safeName = String(name.unicodeScalars.filter { $0.value >= 0x20 && $0 != "\"" && $0 != "\\" && $0.value < 0x7F })
        exchange.setHeader("Content-Disposition", "\(inline ? "inline" : "attachment"); filename=\"\(safeName.isEmpty ? "file" : safeName)\"")
        if !exchange.respond(status: 200, contentType: inline ? type : "application/octet-stream", file: path) {
            page(exchange, status: 404, WebPages.message(title: "Not found", text: "The file is missing from the disk."))
        }
    }

    // MARK: Forms

    /// The fields of a form of this server's own pages; nil (and refused) for a form from elsewhere: another
    /// origin, or without the form token embedded in the pages.
    private func ownForm(_ exchange: HTTPExchange, _ what: String) -> [String: String]? {
        let fields = exchange.formFields()
        if let origin = exchange.header("Origin"), origin != "null", !access.hostAllowed(Self.hostOfOrigin(origin)) {
            refuse(exchange, status: 403, "cross-origin form (Origin \(origin))", page: "\(what) from this server's own pages.")
            return nil
        }
        guard access.formTokenMatches(fields["csrf"]) else {
            refuse(exchange, status: 403, "missing or wrong form token", page: "\(what) from this server's own pages.")
            return nil
        }
        return fields
    }

    /// POST /read: the "Mark read" button of a conversation page (`MarkReadRequests`); the answer sends the browser
    /// back to the page (303), which shows the conversation read.
    private func markRead(_ exchange: HTTPExchange) {
        guard let fields = ownForm(exchange, "Conversations are marked read") else { return }
        guard let account = fields["a"].flatMap({ Int64($0) }), let jid = fields["j"], !jid.isEmpty else {
            return page(exchange, status: 400, WebPages.message(title: "Bad request", text: "The mark-read form is incomplete."))
        }
        let accounts: [Int64: String]
        do { accounts = try browser.accounts() } catch { return failed(exchange, error) }
        guard let accountJID = accounts[account] else {
            return page(exchange, status: 404, WebPages.message(title: "Not found", text: "No such account in the archive."))
        }
        let back = fields["back"].flatMap(Self.ownPage) ?? WebLinks().conversation(accountID: account, jid: jid, at: nil)
        markReadRequests.mark(exchange, account: accountJID, conversation: jid) { [self] failure in
            if let failure {
                self.page(exchange, status: 503, WebPages.message(title: "Not marked read", text: failure))
            } else {
                exchange.setHeader("Location", back)
                exchange.respond(status: 303, contentType: "text/plain; charset=utf-8", body: "marked read\n")
            }
        }
    }

    /// POST /act/TOKEN: a button of a push notification (docs/serve.md, "Push actions"). No session cookie: the signed,
    /// single-use, expiring token allows its one action, which `ServeOptions.pushAction` checks and runs off this thread.
    private func pushAction(_ exchange: HTTPExchange, method: String, token: String) {
        func answer(_ reply: PushActionAnswer) {
            if reply.status >= 400 && reply.status < 500 {
                pushRefused += 1
                options.log.warning("refused a push action from \(exchange.remoteHost): \(reply.text) (\(pushRefused) refused since the start)")
            } else {
                options.log.info("push action from \(exchange.remoteHost): \(reply.text)")
            }
            exchange.setHeader("X-Roost-Push-Refused", String(pushRefused))
            exchange.respond(status: reply.status, contentType: "text/plain; charset=utf-8", body: reply.text + "\n")
        }
        guard let handler = options.pushAction else {
            return answer(PushActionAnswer(status: 404, text: "push actions are not served here"))
        }
        guard method == "POST" else {
            exchange.setHeader("Allow", "POST")
            return answer(PushActionAnswer(status: 405, text: "a push action is a POST"))
        }
        guard pushInFlight < MarkReadRequests.limit, !workers.stopping else {
            exchange.setHeader("Retry-After", "2")
            return answer(PushActionAnswer(status: 503, text: "other push actions are running; try again"))
        }
        pushInFlight += 1
        exchange.pause()
        let started = workers.start(name: "roost-serve-act", { _ in handler(token) }, done: { [self] reply in
            pushInFlight -= 1
            if !exchange.finished {
                answer(reply)
                exchange.resume()
            }
        })
        if !started {
            pushInFlight -= 1
            answer(PushActionAnswer(status: 503, text: "the server is stopping"))
            exchange.resume()
        }
    }

    /// POST /export: the form of a conversation page, with its form token. The answer is the export itself,
    /// as a download (a tar archive for the formats that write folders).
    private func export(_ exchange: HTTPExchange) {
        guard let fields = ownForm(exchange, "Exports are started") else { return }
        guard let format = fields["format"].flatMap(ExportFormat.init(rawValue:)),
              let account = fields["a"].flatMap({ Int64($0) }), let jid = fields["j"], !jid.isEmpty else {
            return page(exchange, status: 400, WebPages.message(title: "Bad request", text: "The export form is incomplete."))
        }
        let accounts: [Int64: String]
        do { accounts = try browser.accounts() } catch { return failed(exchange, error) }
        guard let accountJID = accounts[account] else {
            return page(exchange, status: 404, WebPages.message(title: "Not found", text: "No such account in the archive."))
        }
        var include: Set<ExportInclusion> = []
        if fields["states"] == "1" { include.insert(.states) }
        if fields["presence"] == "1" { include.insert(.presence) }
        exports.start(exchange, format: format, account: accountJID, conversation: jid, include: include)
    }

    /// `page` when it is a page of this server to send the browser back to: a conversation page's address as the
    /// pages write it (`/c?…`), visible ASCII only. Browsers drop tabs and line ends from an address and read `\`
    /// as `/`, so `/\t/evil.example` (a form's `/%09/evil.example`) would leave for another site; nothing but our
    /// own kind of path is taken.
    static func ownPage(_ page: String) -> String? {
        page.hasPrefix("/c?") ? ownPath(page) : nil
    }

    /// `path` when it can only name a page of this server: it starts with one `/`, and holds visible ASCII only
    /// (no tab or line end a browser would drop, no `\` it would read as `/`).
    static func ownPath(_ path: String) -> String? {
        guard path.hasPrefix("/"), !path.hasPrefix("//"),
              path.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" }) else { return nil }
        return path
    }

    private static func hostOfOrigin(_ origin: String) -> String? {
        guard let components = URLComponents(string: origin), let host = components.host else { return nil }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return bracketed + ":" + String(components.port ?? 80)
    }
}
