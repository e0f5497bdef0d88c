import RoostCore

/// XEP-0198 on the client's side: the handled count (ack after commit), the acknowledgements the server sends,
/// and waiting for them.
extension XMPPClient {
    // MARK: - Handled count (ack after commit)

    /// Declares everything through this stanza (or archive page) handled: call once its archive transaction,
    /// holding `acknowledgement.handledCount`, has committed — in stream order. Never blocks and never
    /// touches the socket: when enough has accumulated it asks the connection's writer to send `<a/>`.
    /// Acknowledgements from an earlier connection are ignored.
    public func acknowledge(_ acknowledgement: Acknowledgement) {
        let writer = state.withLock { s -> (any ClientChannel)? in
            guard var sm = s.sm, acknowledgement.sequence > 0, acknowledgement.generation == s.generation else { return nil }
            let due = sm.commit(through: acknowledgement.sequence)
            s.sm = sm
            return due != nil ? s.connection : nil
        }
        writer?.outbox.acknowledge()
    }

    /// Same as `acknowledge(_:)` for the current connection (for simple clients that handle in order).
    public func acknowledge(through sequence: UInt64) {
        let generation = state.withLock { $0.generation }
        acknowledge(Acknowledgement(sequence: sequence, generation: generation, streamID: nil, handledCount: nil))
    }

    func markHandled(_ sequence: UInt64) {
        guard sequence > 0 else { return }
        state.withLock { $0.sm?.inbound.markHandled(sequence) }
    }

    /// Called by the writer when it writes an acknowledgement: the `<a/>` for what is committed now.
    func takeAcknowledgement() -> String? {
        guard let h = state.withLock({ s -> UInt32? in
            guard var sm = s.sm else { return nil }
            let h = sm.takeAck()
            s.sm = sm
            return h
        }) else { return nil }
        return XMLSerializer.serialize(StreamManagement.answer(handled: h))
    }

    // MARK: - The server's acknowledgements

    /// Waits until the server has acknowledged everything sent so far (XEP-0198: asks with `<r/>`; without
    /// stream management, a ping's answer proves the server has processed what came before it). False on
    /// timeout or when the connection ended first.
    public func confirmDelivery(timeout: Duration = .seconds(15)) async -> Bool {
        let (connection, sm) = state.withLock { ($0.connection, $0.sm != nil) }
        guard let connection else { return false }
        guard sm else {
            return (try? await request(Ping.request(to: JID(parsing: configuration.jid.domain)), timeout: timeout)) != nil
        }
        let delivered = OneShot<Bool>()
        let waiting = state.withLock { s -> Bool in
            guard let sm = s.sm, s.connection === connection, sm.outbound.count > 0 else { return false }
            s.deliveryWaiters.append(DeliveryWaiter(upTo: sm.outbound.sent, delivered: delivered))
            return true
        }
        guard waiting else { return state.withLock { $0.connection === connection } }
        connection.outbox.request()
        // The acknowledgement, the end of the connection or the deadline: the first fulfils, the timer goes.
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            delivered.fulfil(false)
        }
        let result = await delivered.value
        timer.cancel()
        state.withLock { s in s.deliveryWaiters.removeAll { $0.delivered === delivered } }
        return result
    }

    /// Asks the server to acknowledge what was sent (XEP-0198 `<r/>`).
    public func requestAcknowledgement() {
        state.withLock { s in s.sm != nil ? s.connection : nil }?.outbox.request()
    }

    /// Number of sent stanzas the server has not acknowledged yet.
    public var unacknowledgedCount: Int { state.withLock { $0.sm?.outbound.count ?? 0 } }

    /// How long the oldest stanza the server has not acknowledged has waited; nil when it acknowledged everything.
    public var oldestUnacknowledgedAge: Duration? {
        state.withLock { $0.sm?.outbound.oldestQueuedAt }.map { ContinuousClock.now - $0 }
    }

    /// The stream-management module's handler: `<r/>` asks the writer for an `<a/>` with the committed `h`;
    /// `<a/>` drops what the server has from the unacknowledged queue and wakes `confirmDelivery`. An `h` above
    /// what was sent is a protocol violation: Roost sends the stream error of XEP-0198 §4 and drops the connection.
    func handleStreamManagement(_ element: Element, generation: Int) {
        switch element.name {
        case "r":
            state.withLock { $0.connection }?.outbox.acknowledge()
        case "a":
            guard let h = StreamManagement.handledCount(in: element) else { return }
            let outcome = state.withLock { s -> Result<[String], OutboundQueue.AckError>? in
                guard var sm = s.sm else { return nil }
                defer { s.sm = sm }
                do throws(OutboundQueue.AckError) {
                    let confirmed = try sm.acknowledged(h)
                    let acked = sm.outbound.acked
                    s.deliveryWaiters.removeAll { waiter in
                        guard Int32(bitPattern: acked &- waiter.upTo) >= 0 else { return false }
                        waiter.delivered.fulfil(true)
                        return true
                    }
                    return .success(confirmed)
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(let confirmed) where !confirmed.isEmpty:
                events.put(.acknowledged(confirmed))
            case .failure(.tooHigh(_, let sent)):
                // XEP-0198 §4: an `h` above what was sent is a stream error.
                let text = "the server acknowledged \(h) stanzas, more than Roost sent (\(sent))"
                var error = StreamErrorReader.element(condition: "undefined-condition", text: text)
                error.append(Element("handled-count-too-high", namespace: Namespace.streamManagement,
                                     attributes: [("h", String(h)), ("send-count", String(sent))]))
                try? rawSend(error)
                abort(.protocolViolation(text), generation: generation)
            default:
                break
            }
        default:
            log(.debug, "\(configuration.jid): ignoring stream-management <\(LogText.quote(element.name))/>")
        }
    }
}
