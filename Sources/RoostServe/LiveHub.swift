import Foundation
import RoostArchive
import RoostCore
import Synchronization

/// A value handed between closures that all run on the server's one thread.
struct OnServerThread<Value>: @unchecked Sendable {
    let value: Value
}

/// Live updates (Server-Sent Events) for open pages.
///
/// What wakes it: `ArchiveWatcher` (the one archive-change watcher, shared with `roost log --follow`), which sees a
/// commit of any writer — the agent, `roost import`, `roost omemo retry` — through inotify and confirms it with
/// `PRAGMA data_version` (in `roost run`, the agent's writer wakes it after each commit); its call is handed to this main loop (one at a time: changes meanwhile are one wake-up),
/// and each open stream is sent what arrived after its cursor.
final class LiveHub {
    private let browser: ArchiveBrowser
    private let thread: GMainThread
    private let log: ServeLog
    private var streams: [ObjectIdentifier: Stream] = [:]
    private var watcher: ArchiveWatcher?
    private var stopped = false
    /// Live pages at once (tabs of the one user this server admits).
    static let streamLimit = 64
    private var lastListAnnouncement: UInt64 = 0
    private var listAnnouncementScheduled = false
    static let listInterval: UInt64 = 1_000_000_000

    private final class Stream {
        let exchange: HTTPExchange
        /// nil: the conversation list's stream.
        let conversation: (accountID: Int64, jid: String, states: Bool, presence: Bool)?
        var cursor: ArchiveBrowser.LiveCursor

        init(exchange: HTTPExchange, conversation: (accountID: Int64, jid: String, states: Bool, presence: Bool)?,
             cursor: ArchiveBrowser.LiveCursor) {
            self.exchange = exchange
            self.conversation = conversation
            self.cursor = cursor
        }
    }

    /// `writer`: the agent's, in `roost run`, whose commits wake the watcher at once.
    init(browser: ArchiveBrowser, writer: ArchiveWriter?, thread: GMainThread, log: ServeLog) {
        self.browser = browser
        self.thread = thread
        self.log = log
        let me = OnServerThread(value: WeakHub(self))
        let queued = WakeQueued()
        watcher = ArchiveWatcher(reader: browser.reader, writer: writer) {
            // One wake-up waits on the main loop at most: the changes meanwhile are read by it.
            guard queued.flag.withLock({ queued in defer { queued = true }; return !queued }) else { return }
            thread.run {
                queued.flag.withLock { $0 = false }
                me.value.hub?.wake()
            }
        }
        if watcher == nil { log.warning("cannot watch \(browser.reader.path) for changes: pages will not update live") }
        // A comment line now and then: proxies keep the stream open, and a vanished reader is noticed.
        let hub = OnServerThread(value: WeakHub(self))
        thread.every(milliseconds: 15_000) {
            guard let hub = hub.value.hub, !hub.stopped else { return false }
            for stream in hub.streams.values { hub.send(": keep-alive\n\n", to: stream) }
            return true
        }
    }

    /// Set by the watcher's thread when it queues a wake-up, cleared on the main loop when that runs.
    private final class WakeQueued: Sendable {
        let flag = Mutex(false)
    }

    private final class WeakHub {
        weak var hub: LiveHub?
        init(_ hub: LiveHub) { self.hub = hub }
    }

    func stop() {
        stopped = true
        watcher?.stop()
        watcher = nil
        streams.removeAll()
    }

    /// Live streams dropped because their reader left too much untaken.
    private(set) var dropped = 0

    /// Sends `text` on `stream`; a reader that does not take what it is sent (a tab asleep, a client that never
    /// reads) is dropped once `ConnectionLimits.streamBacklogBytes` wait for it: its connection is closed (the
    /// browser reconnects and continues where it was, `Last-Event-ID`), rather than the events piling up here.
    private func send(_ text: String, to stream: Stream) {
        guard !stream.exchange.append(text), !stream.exchange.finished else { return }
        guard streams.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return }
        dropped += 1
        log.info("dropped a live page that does not take its updates (\(stream.exchange.backlog) bytes waited for it)")
    }

    /// `GET /events?list=1`, or `GET /events?a=&j=&after=&since=&marks=[&states=1][&presence=1]` for a conversation
    /// page (`marks`: `ArchiveBrowser.AnnotationMarks` as `revision.retraction.reaction`). A reconnecting browser
    /// sends the last event's id (`Last-Event-ID`), which takes the place of after/since/marks so nothing is shown
    /// twice.
    ///
    /// A conversation's stream sends two kinds of event: unnamed ones (`message`) carry what arrived, to add at the
    /// end of the page; `changed` ones carry messages already on the page, drawn anew after a correction, a
    /// retraction or a reaction, each to take the place of the element with its id.
    func open(_ exchange: HTTPExchange) {
        // Each stream is an open connection with its own buffer: a bound on them bounds memory.
        guard streams.count < Self.streamLimit else {
            exchange.setHeader("Retry-After", "30")
            return exchange.respond(status: 503, contentType: "text/plain; charset=utf-8", body: "too many live pages are open\n")
        }
        let query = exchange.query
        var conversation: (accountID: Int64, jid: String, states: Bool, presence: Bool)?
        var cursor = ArchiveBrowser.LiveCursor(afterID: 0, afterTimestamp: 0)
        if query["list"] != "1" {
            guard let account = query["a"].flatMap({ Int64($0) }), let jid = query["j"],
                  let after = query["after"].flatMap({ Int64($0) }), let since = query["since"].flatMap({ Int64($0) }) else {
                return exchange.respond(status: 400, contentType: "text/plain; charset=utf-8", body: "a, j, after and since are needed\n")
            }
            conversation = (account, jid, query["states"] == "1", query["presence"] == "1")
            cursor = ArchiveBrowser.LiveCursor(afterID: after, afterTimestamp: since, marks: query["marks"].flatMap(Self.marks) ?? .init())
            if let last = exchange.header("Last-Event-ID"), let resumed = Self.cursor(fromEventID: last) { cursor = resumed }
            cursor.day = browser.day(of: cursor.afterTimestamp)
        }
        exchange.startStream(contentType: "text/event-stream; charset=utf-8")
        let stream = Stream(exchange: exchange, conversation: conversation, cursor: cursor)
        let key = ObjectIdentifier(stream)
        streams[key] = stream
        send("retry: 3000\n\n", to: stream)
        exchange.whenFinished { [weak self] in self?.streams[key] = nil }
        // What arrived between drawing the page and opening this stream.
        if conversation != nil { push(stream) }
    }

    /// Another connection committed: each conversation's stream is sent what arrived.
    private func wake() {
        guard !stopped else { return }
        for stream in streams.values where stream.conversation != nil { push(stream) }
        announceListChange()
    }

    /// Lists reload themselves on this event (a whole list costs more than a page), so they hear of changes
    /// at most once a second, whatever the agent is catching up on.
    private func announceListChange() {
        let now = DispatchTime.now().uptimeNanoseconds
        let wait = lastListAnnouncement + Self.listInterval > now ? lastListAnnouncement + Self.listInterval - now : 0
        if wait == 0 {
            lastListAnnouncement = now
            for stream in streams.values where stream.conversation == nil { push(stream) }
        } else if !listAnnouncementScheduled {
            listAnnouncementScheduled = true
            let hub = OnServerThread(value: WeakHub(self))
            thread.every(milliseconds: UInt32(wait / 1_000_000) + 1) {
                guard let hub = hub.value.hub, !hub.stopped else { return false }
                hub.listAnnouncementScheduled = false
                hub.announceListChange()
                return false
            }
        }
    }

    private func push(_ stream: Stream) {
        guard let conversation = stream.conversation else {
            send("event: conversations\ndata: changed\n\n", to: stream)
            return
        }
        do {
            guard let update = try browser.live(accountID: conversation.accountID, jid: conversation.jid, after: stream.cursor,
                                                states: conversation.states, presence: conversation.presence) else { return }
            stream.cursor = update.cursor
            let next = update.cursor
            let id = "id: \(next.afterID)-\(next.afterTimestamp)-\(Self.marksText(next.marks))\n"
            var events = ""
            // Changed messages first: a new message may answer one of them.
            if !update.changed.isEmpty { events += "event: changed\n" + id + Self.data(update.changed) + "\n" }
            if !update.html.isEmpty { events += id + Self.data(update.html) + "\n" }
            if !events.isEmpty { send(events, to: stream) }
        } catch {
            log.warning("live update failed: \(error)")
        }
    }

    /// An event's `data:` lines. A browser ends a line at CR, LF or CRLF alike (the event-stream syntax), so the
    /// text is split at each of them: a CR inside a message (an import's `&#13;`) can never start a field of its own
    /// (`id:`, `event:`, `retry:`). Empty lines, which would end the event, are left out (HTML does not need them).
    static func data(_ html: String) -> String {
        var lines = ""
        for line in html.unicodeScalars.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            lines += "data: " + String(String.UnicodeScalarView(line)) + "\n"
        }
        return lines
    }

    /// `AFTER-SINCE-MARKS` (older pages sent `AFTER-SINCE`: their marks are unknown, so changes are looked for
    /// from the start, which redraws at most what is on the page).
    static func cursor(fromEventID id: String) -> ArchiveBrowser.LiveCursor? {
        let parts = id.split(separator: "-", maxSplits: 2)
        guard parts.count >= 2, let after = Int64(parts[0]), let since = Int64(parts[1]) else { return nil }
        let marks = parts.count == 3 ? Self.marks(String(parts[2])) : nil
        if parts.count == 3 && marks == nil { return nil }
        return ArchiveBrowser.LiveCursor(afterID: after, afterTimestamp: since, marks: marks ?? .init())
    }

    /// `revision.retraction.reaction`.
    static func marksText(_ marks: ArchiveBrowser.AnnotationMarks) -> String {
        "\(marks.revision).\(marks.retraction).\(marks.reaction)"
    }

    static func marks(_ text: String) -> ArchiveBrowser.AnnotationMarks? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { Int64($0) }
        guard parts.count == 3, let revision = parts[0], let retraction = parts[1], let reaction = parts[2] else { return nil }
        return ArchiveBrowser.AnnotationMarks(revision: revision, retraction: retraction, reaction: reaction)
    }
}
