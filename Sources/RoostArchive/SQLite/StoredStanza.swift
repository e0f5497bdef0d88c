internal import CSQLite
internal import CZstd

private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The one way a stored stanza (`messages.raw`, `message_revisions.raw`) is written and read (`SchemaV12`).
///
/// A stanza is stored as a zstd frame (a BLOB) compressed with `StanzaCodec.dictionary`; rows written before
/// schema v12 — or not yet reached by its migration — hold the stanza as TEXT. Two SQL functions, registered on
/// every connection by `Database`, are the only accessors:
/// - `roost_stanza_pack(text)` → the BLOB to store (NULL stays NULL);
/// - `roost_stanza(raw)` → the stanza's text, whichever form the row holds (NULL stays NULL).
/// So every reader selects `roost_stanza(raw)` and never sees a compressed byte; a foreign tool reading `raw`
/// sees a zstd frame it can inflate with the dictionary in this file.
enum StoredStanza {
    static func register(on database: Database) throws(SQLiteError) {
        let codec = Unmanaged.passRetained(StanzaCodec()).toOpaque()
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        // The connection owns one codec; SQLite releases it (xDestroy) when the last function using it is dropped.
        var rc = sqlite3_create_function_v2(database.handle, "roost_stanza_pack", 1, flags, codec, { context, _, arguments in
            guard let context, let argument = arguments?[0] else { return }
            StoredStanza.pack(context: context, value: argument)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else {
            Unmanaged<StanzaCodec>.fromOpaque(codec).release()
            throw database.error(code: rc, sql: nil)
        }
        rc = sqlite3_create_function_v2(database.handle, "roost_stanza", 1, flags, codec, { context, _, arguments in
            guard let context, let argument = arguments?[0] else { return }
            StoredStanza.unpack(context: context, value: argument)
        }, nil, nil, { codec in
            if let codec { Unmanaged<StanzaCodec>.fromOpaque(codec).release() }
        })
        guard rc == SQLITE_OK else { throw database.error(code: rc, sql: nil) }
    }

    private static func codec(_ context: OpaquePointer) -> StanzaCodec {
        Unmanaged<StanzaCodec>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
    }

    fileprivate static func pack(context: OpaquePointer, value: OpaquePointer) {
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: return sqlite3_result_null(context)
        case SQLITE_BLOB: return sqlite3_result_value(context, value)  // already packed (a copied row)
        default: break
        }
        let count = Int(sqlite3_value_bytes(value))
        guard let text = sqlite3_value_text(value) else { return sqlite3_result_null(context) }
        do {
            let frame = try codec(context).compress(UnsafeRawBufferPointer(start: text, count: count))
            frame.withUnsafeBytes { bytes in
                sqlite3_result_blob(context, bytes.baseAddress, Int32(bytes.count), transientDestructor)
            }
        } catch {
            sqlite3_result_error(context, error.description, -1)
        }
    }

    fileprivate static func unpack(context: OpaquePointer, value: OpaquePointer) {
        guard sqlite3_value_type(value) == SQLITE_BLOB else { return sqlite3_result_value(context, value) }
        let count = Int(sqlite3_value_bytes(value))
        let frame = UnsafeRawBufferPointer(start: sqlite3_value_blob(value), count: count)
        do {
            let text = try codec(context).decompress(frame)
            text.withUnsafeBytes { bytes in
                // A stanza of zero bytes still needs a non-NULL pointer to be the empty text, not NULL.
                let start = bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                sqlite3_result_text(context, start.assumingMemoryBound(to: CChar.self), Int32(bytes.count), transientDestructor)
            }
        } catch {
            sqlite3_result_error(context, error.description, -1)
        }
    }
}

/// What went wrong compressing or inflating one stored stanza.
struct StanzaCodecError: Error, CustomStringConvertible {
    let description: String
}

/// zstd contexts and the built-in dictionary, created on first use (a CLI command that never reads a stanza
/// never pays for them). One per connection: SQLite calls a connection's functions one at a time.
///
/// Why zstd with a dictionary (measured on 10,000 stanzas of the bench history, avg 577 bytes, and 10,000
/// stanzas a real Prosody delivered in `contrib/bench/ingest`, avg 210 bytes; docs/performance-history.md,
/// "Archive size: stored stanzas compressed"):
/// zstd level 3 + this dictionary keeps 0.40 / 0.52 of the bytes at ~4 / 2 µs per stanza; zlib level 6 + the same
/// dictionary 0.38 / 0.43 but at ~13 / 7 µs (three times the CPU on the import path for 2–9 % fewer bytes);
/// without a dictionary both keep 0.61–0.78 (a stanza is too short to find its own repeats).
final class StanzaCodec {
    private var compressor: OpaquePointer?
    private var compressionDictionary: OpaquePointer?
    private var decompressor: OpaquePointer?
    private var decompressionDictionary: OpaquePointer?

    /// Larger than any stanza a server accepts (Prosody's default stanza limit is 256 KiB; ejabberd's 64 KiB ×
    /// a few): a frame claiming more is corrupt, not a stanza.
    private static let largestStanza = 64 << 20
    private static let level: Int32 = 3

    deinit {
        ZSTD_freeCCtx(compressor)
        ZSTD_freeCDict(compressionDictionary)
        ZSTD_freeDCtx(decompressor)
        ZSTD_freeDDict(decompressionDictionary)
    }

    func compress(_ input: UnsafeRawBufferPointer) throws(StanzaCodecError) -> [UInt8] {
        if compressor == nil {
            compressor = ZSTD_createCCtx()
            compressionDictionary = ZSTD_createCDict(Self.dictionary.utf8Start, Self.dictionary.utf8CodeUnitCount, Self.level)
            guard let compressor, compressionDictionary != nil else { throw StanzaCodecError(description: "zstd: out of memory") }
            // The content size stays in the frame (inflating needs it); no checksum (SQLite's pages are the unit
            // of integrity) and no dictionary id (there is one dictionary; see `dictionary`).
            ZSTD_CCtx_setParameter(compressor, ZSTD_c_checksumFlag, 0)
            ZSTD_CCtx_setParameter(compressor, ZSTD_c_dictIDFlag, 0)
            ZSTD_CCtx_setParameter(compressor, ZSTD_c_contentSizeFlag, 1)
        }
        guard let compressor else { throw StanzaCodecError(description: "zstd: out of memory") }
        ZSTD_CCtx_refCDict(compressor, compressionDictionary)
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let written = output.withUnsafeMutableBytes { out in
            ZSTD_compress2(compressor, out.baseAddress, out.count, input.baseAddress, input.count)
        }
        guard ZSTD_isError(written) == 0 else {
            throw StanzaCodecError(description: "cannot compress a stanza: \(String(cString: ZSTD_getErrorName(written)))")
        }
        output.removeSubrange(written...)
        return output
    }

    func decompress(_ frame: UnsafeRawBufferPointer) throws(StanzaCodecError) -> [UInt8] {
        if decompressor == nil {
            decompressor = ZSTD_createDCtx()
            decompressionDictionary = ZSTD_createDDict(Self.dictionary.utf8Start, Self.dictionary.utf8CodeUnitCount)
        }
        guard let decompressor, let decompressionDictionary else { throw StanzaCodecError(description: "zstd: out of memory") }
        let size = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
        // ZSTD_CONTENTSIZE_UNKNOWN / _ERROR are the two largest UInt64 values.
        guard size <= UInt64(Self.largestStanza) else {
            throw StanzaCodecError(description: "a stored stanza is corrupt (not a zstd frame of a stanza)")
        }
        var output = [UInt8](repeating: 0, count: Int(size))
        let written = output.withUnsafeMutableBytes { out in
            ZSTD_decompress_usingDDict(decompressor, out.baseAddress, out.count, frame.baseAddress, frame.count,
                                       decompressionDictionary)
        }
        guard ZSTD_isError(written) == 0, written == Int(size) else {
            throw StanzaCodecError(description: "a stored stanza is corrupt (zstd: \(String(cString: ZSTD_getErrorName(written))))")
        }
        return output
    }

    /// The built-in dictionary: what XMPP messages repeat (namespaces, element and attribute names in the form
    /// Roost's serializer writes them), most common last (zstd reaches the end of a dictionary cheapest).
    /// Written by hand from the XEPs Roost archives, not trained on a corpus. FROZEN: rows store frames made with
    /// it and no dictionary id, so changing one byte makes every stored stanza unreadable; a better dictionary
    /// needs a new content-tagged format and a migration.
    static let dictionary: StaticString = """
        <message xmlns="jabber:client" type="groupchat" type="normal" type="headline" type="error" xml:lang="en" \
        <subject></subject><thread></thread><error type="cancel"><service-unavailable xmlns="urn:ietf:params:xml:ns:xmpp-stanzas"/>\
        </error><x xmlns="http://jabber.org/protocol/muc#user"><item jid="" affiliation="member" role="participant"/></x>\
        <occupant-id xmlns="urn:xmpp:occupant-id:0" id=""/><reply xmlns="urn:xmpp:reply:0" to="" id=""/>\
        <fallback xmlns="urn:xmpp:fallback:0" for="urn:xmpp:reply:0"><body start="0" end=""/></fallback>\
        <reactions xmlns="urn:xmpp:reactions:0" id=""><reaction></reaction></reactions>\
        <retract xmlns="urn:xmpp:message-retract:1" id=""/><replace xmlns="urn:xmpp:message-correct:0" id=""/>\
        <x xmlns="jabber:x:oob"><url>https://</url></x><file-sharing xmlns="urn:xmpp:sfs:0">\
        <file xmlns="urn:xmpp:file:metadata:0"><media-type>image/jpeg</media-type><name></name><size></size>\
        <hash xmlns="urn:xmpp:hashes:2" algo="sha-256"></hash></file><sources>\
        <url-data xmlns="http://jabber.org/protocol/url-data" target="https://"/></sources></file-sharing>\
        <encrypted xmlns="eu.siacs.conversations.axolotl"><header sid=""><key rid="" prekey="true"></key><iv></iv></header>\
        <payload></payload></encrypted><encryption xmlns="urn:xmpp:eme:0" namespace="eu.siacs.conversations.axolotl" \
        name="OMEMO"/><store xmlns="urn:xmpp:hints"/><no-store xmlns="urn:xmpp:hints"/><no-copy xmlns="urn:xmpp:hints"/>\
        <private xmlns="urn:xmpp:carbons:2"/><received xmlns="urn:xmpp:carbons:2"><forwarded xmlns="urn:xmpp:forward:0">\
        </forwarded></received><sent xmlns="urn:xmpp:carbons:2"><result xmlns="urn:xmpp:mam:2" queryid="" id="">\
        <received xmlns="urn:xmpp:receipts" id=""/><displayed xmlns="urn:xmpp:chat-markers:0" id=""/>\
        <received xmlns="urn:xmpp:chat-markers:0" id=""/><markable xmlns="urn:xmpp:chat-markers:0"/>\
        <composing xmlns="http://jabber.org/protocol/chatstates"/><paused xmlns="http://jabber.org/protocol/chatstates"/>\
        <inactive xmlns="http://jabber.org/protocol/chatstates"/><gone xmlns="http://jabber.org/protocol/chatstates"/>\
        <active xmlns="http://jabber.org/protocol/chatstates"/><request xmlns="urn:xmpp:receipts"/>\
        <delay xmlns="urn:xmpp:delay" from="" stamp="2026-01-01T00:00:00.000Z"/><origin-id xmlns="urn:xmpp:sid:0" id=""/>\
        <stanza-id xmlns="urn:xmpp:sid:0" by="" id=""/></message><message xmlns="jabber:client" from="" to="" \
        type="chat" id=""><body></body></message>
        """
}
