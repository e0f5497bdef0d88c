import Foundation
import RoostArchive
import RoostCore

/// Where a running web view leaves its address for the user, and how `--open` hands it to a browser
/// without the token ever appearing in a process's arguments (where any user on the machine could read it).
package enum ServeRuntimeFiles {
    /// `serve.url` beside the agent's control socket (`$XDG_RUNTIME_DIR/roost/`), mode 0600: the address with
    /// its token, for `roost run` with `[serve] enabled`, whose log must not carry the token.
    package static func writeURL(_ url: String, folder: String) throws(ServeError) -> String {
        try write(url + "\n", name: "serve.url", folder: folder)
    }

    /// A page in the runtime folder (0600) that forwards to `url`; the browser is given its path, not the URL.
    static func writeRedirect(_ url: String, folder: String) throws(ServeError) -> String {
        let link = HTMLText.escape(url)
        return try write("""
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=\(link)">
            <meta name="referrer" content="no-referrer"><title>Roost</title></head>
            <body><p><a href="\(link)">Open the Roost web view</a></p></body></html>

            """, name: "serve-open.html", folder: folder)
    }

    /// Through the runtime folder's one check (`RuntimeFolder`): a folder of this user's, private; the file made
    /// exclusively under a temporary name, 0600, renamed into place.
    private static func write(_ text: String, name: String, folder: String) throws(ServeError) -> String {
        do {
            return try RuntimeFolder.write(Array(text.utf8), name: name, in: folder)
        } catch {
            throw .runtimeFile(error)
        }
    }

    /// The address with its token that `roost run` left in the runtime folder (`serve.url`), or nil when there is
    /// none; throws when the folder or the file is not this user's own and private (another user may have planted
    /// it, to have `--open` open a page of theirs).
    package static func readURL(folder: String) throws(ServeError) -> String? {
        do {
            guard let bytes = try RuntimeFolder.read(name: "serve.url", in: folder) else { return nil }
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw .runtimeFile(error)
        }
    }

    /// Opens the web view in the user's browser (`xdg-open` on a forwarding page). Returns a warning to show
    /// when that failed; the printed address still works.
    package static func open(_ url: String, folder: String) async -> String? {
        let page: String
        do { page = try writeRedirect(url, folder: folder) } catch { return "\(error)" }
        // xdg-open may wait for the browser it starts; it is not waited for.
        Task.detached {
            _ = await ProcessRunner.run(argv: ["xdg-open", page], output: .discard, timeout: .seconds(30 * 86_400))
        }
        return nil
    }
}
