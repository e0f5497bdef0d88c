/// The pages' only styling, inlined in each page (no network, nothing to fetch). Readable on a phone
/// (fluid width, large enough text), follows the system's dark mode, prints cleanly.
package enum HTMLStyle {
    /// No scripts, no network: the page may only use its own inline styles and images next to it.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:"

    static let css = """
    :root{--bg:#f4f5f7;--fg:#1d2026;--muted:#6b7280;--in:#ffffff;--out:#d9f2e3;--line:#e3e5e8;--accent:#2f6f4f;--mention:#fff1c7}
    @media (prefers-color-scheme:dark){:root{--bg:#15171b;--fg:#e8eaed;--muted:#9aa0a6;--in:#23262c;--out:#1f4a35;--line:#2c3037;--accent:#7fd1a5;--mention:#4a3d12}}
    *{box-sizing:border-box}
    body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",sans-serif}
    a{color:var(--accent)}
    header.top{position:sticky;top:0;z-index:1;display:flex;align-items:center;gap:.75rem;padding:.6rem 1rem;background:var(--bg);border-bottom:1px solid var(--line)}
    header.top h1{font-size:1.1rem;margin:0;overflow-wrap:anywhere}
    header.top .sub{color:var(--muted);font-size:.8rem;overflow-wrap:anywhere}
    header.top .back{text-decoration:none;font-size:1.4rem;padding:0 .25rem}
    main{max-width:46rem;margin:0 auto;padding:.5rem .75rem 3rem}
    .day{text-align:center;margin:1.2rem 0 .6rem}
    .day span{background:var(--line);color:var(--muted);border-radius:1rem;padding:.15rem .7rem;font-size:.8rem}
    .msg{display:flex;align-items:flex-end;gap:.4rem;margin:.2rem 0}
    .msg.out{flex-direction:row-reverse}
    .bubble{max-width:80%;background:var(--in);border-radius:1rem;padding:.4rem .7rem;box-shadow:0 1px 1px rgba(0,0,0,.08)}
    .out .bubble{background:var(--out)}
    .mention .bubble{background:var(--mention);box-shadow:inset 3px 0 0 #e0a800}
    .name{font-weight:600;font-size:.8rem;color:var(--accent)}
    .name.occupant{color:hsl(var(--hue),55%,36%)}
    @media (prefers-color-scheme:dark){.name.occupant{color:hsl(var(--hue),60%,72%)}}
    .text{white-space:pre-wrap;overflow-wrap:anywhere}
    .meta{color:var(--muted);font-size:.7rem;text-align:right;margin-top:.1rem}
    a.reply{display:block;border-left:3px solid var(--muted);padding-left:.4rem;margin-bottom:.2rem;font-size:.8rem;color:var(--muted);text-decoration:none;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
    .tombstone{font-style:italic;color:var(--muted)}
    .reactions{font-size:.8rem;margin-top:.15rem}
    .tick.read{color:#3b82f6}
    .text code,.text pre{font-family:ui-monospace,monospace;background:rgba(127,127,127,.15);border-radius:3px}
    .text pre{margin:.2rem 0;padding:.3rem;white-space:pre-wrap}
    .text blockquote{margin:.1rem 0;padding-left:.5rem;border-left:3px solid var(--muted)}
    .avatar{flex:none;width:2rem;height:2rem;border-radius:50%;object-fit:cover;display:inline-flex;align-items:center;justify-content:center;color:#fff;font-weight:600;font-size:.9rem}
    .spacer{flex:none;width:2rem}
    .event{text-align:center;color:var(--muted);font-size:.75rem;margin:.15rem 0}
    .file{display:block;margin-top:.2rem;overflow-wrap:anywhere}
    .file img{max-width:100%;max-height:20rem;width:auto;height:auto;border-radius:.5rem;display:block}
    .size{opacity:.7;font-size:.85em}
    details.revisions{font-size:.8rem;color:var(--muted)}
    details.revisions ol{margin:.2rem 0;padding-left:1.2rem;white-space:pre-wrap;overflow-wrap:anywhere}
    ul.conversations{list-style:none;margin:0;padding:0}
    ul.conversations li a{display:flex;align-items:center;gap:.75rem;padding:.6rem .25rem;border-bottom:1px solid var(--line);text-decoration:none;color:inherit}
    ul.conversations .title{font-weight:600;overflow-wrap:anywhere}
    ul.conversations .detail{color:var(--muted);font-size:.8rem;overflow-wrap:anywhere}
    h2{font-size:1rem;color:var(--muted);margin:1.5rem 0 .25rem}
    .name,.text,.file,.size,.title,.detail,.snippet,.reactions{unicode-bidi:isolate}
    @media print{header.top{position:static}.bubble{box-shadow:none;border:1px solid var(--line)}}
    """

    /// The start of every page, up to and including `<body>`. The web view passes its own policy (it sends
    /// the same in a header), its name, and `extra` lines for the head (its own styles and script).
    package static func head(title: String, policy: String = contentSecurityPolicy, generator: String = "roost export",
                             extra: String = "") -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy" content="\(policy)">
        <meta name="generator" content="\(generator)">
        <title>\(HTMLText.escape(title))</title>
        <style>
        \(css)
        </style>
        \(extra)</head>
        <body>

        """
    }
}
