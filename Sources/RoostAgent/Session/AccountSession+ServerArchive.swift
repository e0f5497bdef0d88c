import RoostCore
import Foundation
import RoostArchive
import RoostXMPP
import RoostNotify

/// The account's server archive (XEP-0313): catching up page by page from the mark and polling it; after a read, the
/// sends left unconfirmed by a reconnect are settled and the outbox of messages queued while offline is sent.
extension AccountSession {
    // MARK: - Server archive

    /// Reads what the server archived since the mark. Each page is committed before the next is asked for,
    /// so the server's queue of unacknowledged stanzas stays at about one page (ejabberd closes the stream
    /// past `max_ack_queue`, 5000 by default). A failure is logged and retried at the next poll.
    func catchUp(progress: Bool) async {
        guard !catchUpRunning, !stopping else { return }
        catchUpRunning = true
        defer { catchUpRunning = false }
        let run = ArchiveCatchUp(client: client, archive: jid, log: log, commits: pageCommits)
        do {
            let summary = try await run.run(from: archiveMark, lastTimestamp: archiveMarkTimestamp,
                                            progress: progress && archiveMark == nil) { mark in
                // Called after each committed page: the in-memory mark follows the one on disk.
                await self.advanceMark(to: mark)
            }
            lastCatchUp = Date()
            let caughtUp = backlog.take()
            if caughtUp.dropped > 0 {
                log.info("\(jid): the catch-up summary covers the newest \(caughtUp.messages.count) of \(caughtUp.messages.count + caughtUp.dropped) new messages")
            }
            if !caughtUp.messages.isEmpty { notifications.post(.catchUpFinished(account: jid.description, messages: caughtUp.messages)) }
            if summary.inserted > 0 || progress {
                log.info("\(jid): server archive read (\(summary.pages) \(summary.pages == 1 ? "page" : "pages")): \(summary.inserted) new \(summary.inserted == 1 ? "message" : "messages")")
            }
            await settleUnconfirmedSends(serverArchiveRead: true)
        } catch {
            // A stop or a dropped link ended the query: nothing failed, the next login reads on from the mark.
            guard !stopping, client.isConnected else {
                log.debug("\(jid): reading the server archive ended with the connection: \(LogText.quote(error))")
                return
            }
            log.warning("\(jid): reading the server archive failed: \(LogText.quote(error)); trying again at the next poll")
        }
    }

    func advanceMark(to mark: ArchiveCatchUp.Mark) {
        archiveMark = mark.id
        if let timestamp = mark.timestamp { archiveMarkTimestamp = max(archiveMarkTimestamp ?? timestamp, timestamp) }
    }

    func startPolling() {
        guard pollTask == nil, let interval = settings.archivePollInterval else { return }
        pollTask = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { return }
                await self.pollArchive()
            }
        }
    }

    func pollArchive() async {
        guard client.isConnected else { return }
        // A message queued just as the account came online may have missed the first look.
        await sendOutbox()
        await catchUp(progress: false)
    }

    /// Outgoing messages still `pending` from before the current session, once the server archive was read,
    /// were not received by the server (what it received it archived, and that copy settled them as sent):
    /// they are sent again under the same origin-id (receivers that deduplicate show them once). Without a
    /// server archive, or without the stanza to send, they are marked `failed`. Messages of the current
    /// session are not touched: stream management settles them.
    func settleUnconfirmedSends(serverArchiveRead: Bool) async {
        guard let reader = try? ArchiveReader(path: settings.archivePath),
              let unconfirmed = try? reader.unconfirmedMessages(account: jid.description) else { return }
        var failed: [String] = []
        var resent = 0
        for message in unconfirmed where message.delivery == .pending && message.timestamp < sessionStartedAt
            && !resentOnce.contains(message.originId) && !sentFromOutbox.contains(message.originId) {
            guard serverArchiveRead, let raw = message.rawStanza, var element = Element(parsing: raw) else {
                failed.append(message.originId)
                continue
            }
            element[attribute: "from"] = nil
            do {
                try client.send(Message(element), tracking: message.originId)
                resentOnce.insert(message.originId)
                resent += 1
            } catch {
                failed.append(message.originId)
            }
        }
        if resent > 0 { log.info("\(jid): sent again \(resent) message(s) the server had not received") }
        if !failed.isEmpty {
            log.warning("\(jid): \(failed.count) message(s) could not be sent; `roost log` marks them failed")
            await writer.submit([.delivery(account: jid.description, originIDs: failed, state: .failed)])
        }
    }

    /// The outbox (`SchemaV16`): messages `roost send` queued while the account was offline, sent in order now that
    /// it is online. Each leaves the outbox (committed) just before it is written to the stream: from then on it is
    /// a pending message like any other (acknowledged, found in the server archive, or sent again once), so a crash
    /// or a cut between the two never sends it twice.
    func sendOutbox() async {
        guard let reader = try? ArchiveReader(path: settings.archivePath),
              let queued = try? reader.outbox(account: jid.description), !queued.isEmpty, !sendingOutbox else { return }
        sendingOutbox = true
        defer { sendingOutbox = false }
        let archive = actionArchive
        var sent = 0
        for message in queued {
            guard client.isConnected, !Task.isCancelled else { break }
            do {
                try await archive.record([.outbox(account: jid.description, originID: message.originId, queued: false,
                                                  timestamp: Timestamp.now())])
            } catch {
                log.warning("\(jid): could not take a message out of the outbox: \(LogText.quote(error)); it is sent at the next connection")
                break
            }
            guard let raw = message.rawStanza, var element = Element(parsing: raw) else {
                await writer.submit([.delivery(account: jid.description, originIDs: [message.originId], state: .failed)])
                continue
            }
            element[attribute: "from"] = nil
            sentFromOutbox.insert(message.originId)
            do {
                try client.send(Message(element), tracking: message.originId)
                sent += 1
            } catch {
                // Pending, out of the outbox: the next session's settling sends it once the server archive lacks it.
                break
            }
        }
        if sent > 0 { log.info("\(jid): sent \(sent) message(s) queued while the account was offline") }
    }
}
