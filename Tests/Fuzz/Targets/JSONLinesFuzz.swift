import Foundation
@testable import RoostArchive
import RoostCore

/// Target `jsonl`: one line of an import file (`ImportLineDecoder`, with its JSON parser and time codec).
///
/// Properties:
/// - any bytes are either archive events or a reason, never a crash;
/// - every address in the events passes the engine's check (`JIDSyntax`): accounts bare, conversations bare or
///   `room@service/nick` (a private conversation with a room's occupant: a local part and a resource, never a group
///   chat message's conversation);
/// - every time in the events is one the codec writes and reads back.
enum JSONLinesFuzz {
    static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let item: ImportItem
        do { item = try ImportLineDecoder.decode(bytes) } catch { return nil }
        var addresses: [(String, bare: Bool)] = []
        var conversations: [(String, groupchat: Bool)] = []
        var times: [Int64] = []
        switch item {
        case .message(let events):
            for case .message(let record) in events {
                addresses += [(record.account, true), (record.from, false)]
                conversations.append((record.conversation, record.kind == .groupchat))
                if !record.to.isEmpty { addresses.append((record.to, false)) }
                times += [record.timestamp, record.receivedAt] + (record.claimedAt.map { [$0] } ?? [])
            }
        case .chatState(let record):
            addresses += [(record.account, true), (record.from, false)]
            conversations.append((record.conversation, false))
            times.append(record.timestamp)
        case .presence(let record):
            addresses += [(record.account, true), (record.contact, true)]
            times.append(record.timestamp)
        case .subscription(let record):
            addresses += [(record.account, true), (record.jid, true)]
            times.append(record.timestamp)
        case .contact(let roster, _, let vCard):
            if let roster { addresses += [(roster.account, true), (roster.jid, true)] }
            if let vCard { addresses += [(vCard.account, true), (vCard.jid, true)] }
        }
        for (address, bare) in addresses {
            guard let parts = try? JIDSyntax.parse(address) else { return "\(address.debugDescription) was accepted as an address" }
            if bare && parts.resource != nil { return "\(address.debugDescription) was accepted as a bare address" }
        }
        for (conversation, groupchat) in conversations {
            guard let parts = try? JIDSyntax.parse(conversation) else { return "\(conversation.debugDescription) was accepted as a conversation" }
            guard parts.resource != nil else { continue }
            if groupchat { return "\(conversation.debugDescription) was accepted as a group chat's conversation" }
            if parts.localpart == nil { return "\(conversation.debugDescription) was accepted as a room occupant's conversation" }
        }
        for time in times where Timestamp.parse(Timestamp.rfc3339(time)) != time {
            return "the time \(time) does not survive the codec"
        }
        return nil
    }
}
