#!/usr/bin/python3
"""browser-check.py: drives headless Chromium over the DevTools protocol through `roost serve`'s web view,
as a person would, and prints what it saw as JSON lines (one per step) for a test to assert on.

    browser-check.py --url URL [--inspect TEXT]... [--conversation TEXT] [--pages N] [--search WORD]
                     [--list-command CMD --list-expect N]... [--live-command CMD --live-text TEXT]
                     [--update-command CMD --update-text TEXT [--update-gone TEXT]...] [--mark-read]
                     [--screenshots DIR] [--probe] [--export FORMAT] [--no-script] [--timeout S]
    browser-check.py --url URL [--read PAGE]... [--type-search QUERY] [--timeout S]

URL is the address `roost serve` printed (with its token). Steps, each printing {"step": NAME, ...}:
  list          open URL; the conversation list (titles, whether the list's live stream opened)
  inspect       (once per --inspect TEXT) click the list entry containing TEXT and read the page as drawn:
                its header, senders' names and colours, message texts, pictures (loaded? the SHA-256 of
                what the page fetched for them, and of the file their link opens), file links; then switch on the presence and chat-state
                timelines with their links and read the lines they add
  unread        (with --list-command) the unread count of the --conversation entry in the list; then for each
                --list-command CMD (a shell command: a peer's message, `roost read`) run it and wait for the
                count to become its --list-expect N while the list stays open (no reload)
  conversation  click the list entry containing TEXT; the messages shown (count, first and last text)
  export        (with --export FORMAT, then nothing more) submit the conversation page's export form as it is
                drawn (its hidden fields, the form token, the browser's cookie) with FORMAT chosen: the answer's
                status, Content-Disposition and text
  older         scroll to the top N times; the message count after each page arrives
  keys          press j twice and k once; which message is selected
  search        press "/", type WORD, Enter; the hits (count, <mark> texts), then open the first hit in
                context: the targeted message, whether it is on screen, its text
  live          back to the conversation; once its live stream is open, run CMD (a shell command, e.g.
                xmpp-peer.py sending a message) and wait for TEXT to appear without a reload
  update        back to the conversation; note the elements holding each --update-gone TEXT, run CMD (e.g. a
                correction and a retraction sent by a peer) and wait, without a reload, for TEXT to show and every
                gone text to leave: which element ids hold what before and after, tombstones
  markread      the conversation's unread count; the list's count after viewing it (unchanged: viewing does not
                mark read); the page's "Mark read" button clicked; the page's and the list's count after it; and
                mark-read requests refused: without the form token, from another origin, by GET
  probe         requests a browser would not make: without the cookie, a foreign Host, a wrong token, an
                export POST without and with the form token, a path instead of a file id
  noscript      scripts switched off: the conversation, its older page by the link, search by address
  console       console errors, exceptions and Content-Security-Policy violations seen throughout
With --read or --type-search only these steps run (URL may also be an export's index.html, as file://):
  read          (once per --read PAGE: a path of the web view, or a page relative to the export's index) the page's
                title, the list's titles, every link in message text (href, rel, target, text), every message (id,
                classes, text, which side it is drawn on, its bubble's colour), and anything injected: attributes
                starting with "on", javascript: links, script elements, elements a message's markup would make
  typed         on the list, type QUERY into the search box key by key (no Enter): the hits shown in place, and
                whether the page stayed (no navigation); then Enter: the results page's hits; then back on the list,
                typing and Esc: the list comes back
Each screenshot is checked for content (decoded here: distinct colours, not one flat fill).
Exit status: 0 when every step could run (the test judges the results), 1 otherwise.
"""

import argparse
import base64
import http.client
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib

try:
    import websocket
except ImportError:
    sys.stderr.write("browser-check: python3-websocket is not installed (apt-get install python3-websocket)\n")
    sys.exit(1)


def emit(step, **fields):
    sys.stdout.write(json.dumps({"step": step, **fields}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class Failure(Exception):
    pass


class Chromium:
    """One headless Chromium with one page, spoken to over its DevTools WebSocket."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="roost-browser-")
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            raise Failure("chromium is not installed (apt-get install chromium)")
        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--window-size=1000,900",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": self.profile})
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + timeout
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if time.time() > deadline or self.process.poll() is not None:
                raise Failure("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = open(port_file).read().split("\n")[0]
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port, timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.problems = []
        self.loads = 0
        self.navigations = []  # scripts asked again because a navigation cancelled them
        self.urls = []         # every page the tab showed, in order
        for domain in ("Page", "Runtime", "Log", "Network", "Inspector"):
            self.call(domain + ".enable")

    def close(self):
        try:
            self.socket.close()
        except Exception:
            pass
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method, **params):
        self.next_id += 1
        ident = self.next_id
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise Failure("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            self.note(message)

    def note(self, message):
        method = message.get("method", "")
        params = message.get("params", {})
        if method == "Page.loadEventFired":
            self.loads += 1
        elif method == "Inspector.targetCrashed":
            self.problems.append("the page's renderer crashed")
        elif method == "Page.frameNavigated" and not params.get("frame", {}).get("parentId"):
            self.urls.append(params["frame"].get("url", ""))
        elif method == "Runtime.exceptionThrown":
            self.problems.append("exception: " + json.dumps(params.get("exceptionDetails", {}).get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.problems.append("console: " + json.dumps([a.get("value") for a in params.get("args", [])]))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            text = params["entry"].get("text", "")
            # The web view sends no favicon; Chromium logs the 204 as nothing, but a 404 as an error.
            self.problems.append("log: " + text)

    def evaluate(self, expression):
        for attempt in range(4):
            try:
                result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
                break
            except Failure as error:
                # A navigation that commits while the script runs cancels it: ask again on the new document.
                if "navigated or closed" not in str(error) or attempt == 3:
                    raise
                self.navigations.append(expression[:60])
                time.sleep(0.2)
        if "exceptionDetails" in result:
            raise Failure("script failed: %s: %s" % (expression[:80], result["exceptionDetails"].get("text")))
        return result.get("result", {}).get("value")

    def wait(self, expression, what, timeout=None):
        deadline = time.time() + (timeout or self.timeout)
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise Failure("timed out waiting for " + what)

    def navigate(self, url):
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && location.href !== 'about:blank'", "the page to load")

    def key(self, key, text=None):
        code = {"Enter": 13, "/": 191, "j": 74, "k": 75, "Escape": 27}.get(key, 0)
        down = {"type": "keyDown", "key": key, "windowsVirtualKeyCode": code}
        if text is not None:
            down["text"] = text
        self.call("Input.dispatchKeyEvent", **down)
        self.call("Input.dispatchKeyEvent", type="keyUp", key=key, windowsVirtualKeyCode=code)

    def screenshot(self, path):
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        with open(path, "wb") as f:
            f.write(data)
        return {"path": path, "bytes": len(data), "colours": png_colours(data)}


def png_colours(data):
    """Distinct colours among sampled pixels of an 8-bit RGB(A) PNG: 1 means a blank, flat screenshot."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    offset, width, height, channels, idat = 8, 0, 0, 0, b""
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        chunk = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            channels = {2: 3, 6: 4}.get(colour, 0)
            if depth != 8 or not channels:
                return 0
        elif kind == b"IDAT":
            idat += chunk
        offset += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    position = 0
    for row in range(height):
        kind = raw[position]
        line = bytearray(raw[position + 1:position + 1 + stride])
        position += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        previous = line
        if row % 7 == 0:
            for x in range(0, width, 5):
                colours.add(bytes(line[x * channels:x * channels + 3]))
    return len(colours)


def http_request(base, method, path, headers=None, body=None):
    parsed = urllib.parse.urlparse(base)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    headers = dict(headers or {})
    headers.setdefault("Host", parsed.netloc)
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        headers["Content-Length"] = str(len(body))
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body.encode() if body is not None else None)
    response = connection.getresponse()
    content = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), content


READ_PAGE = """(() => {
    const text = (e) => e ? e.textContent : null;
    const messages = Array.from(document.querySelectorAll('main .msg')).map(m => ({
        id: m.id, classes: Array.from(m.classList), text: text(m.querySelector('.text')), name: text(m.querySelector('.name')),
        direction: getComputedStyle(m).flexDirection, background: getComputedStyle(m.querySelector('.bubble')).backgroundColor}));
    const links = Array.from(document.querySelectorAll('main .msg .text a')).map(a => ({
        href: a.getAttribute('href'), rel: a.getAttribute('rel'), target: a.getAttribute('target'), text: a.textContent,
        marks: Array.from(a.querySelectorAll('mark')).map(m => m.textContent)}));
    return {
        title: text(document.querySelector('h1')),
        list: Array.from(document.querySelectorAll('ul.conversations .title')).map(e => e.textContent),
        messages: messages, links: links,
        on_attributes: Array.from(document.querySelectorAll('*')).filter(e => Array.from(e.attributes).some(a => /^on/i.test(a.name))).length,
        javascript_links: Array.from(document.querySelectorAll('[href],[src],[action]')).filter(e =>
            /^\\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action') || '')).length,
        scripts: Array.from(document.scripts).map(s => s.getAttribute('src')),
        markup: document.querySelectorAll('main .text b, main .text i, main .text img, main .text iframe, main .text a:not([rel])').length,
    }; })()"""


def read_pages(args, browser):
    browser.navigate(args.url)
    # The web view forwards from the address with the token to the same without it; an export's index is at once.
    browser.wait("!location.search.includes('token=') && document.readyState === 'complete' && !!document.querySelector('ul.conversations')",
                 "the conversation list")
    base = browser.evaluate("location.href")
    for page in args.read or []:
        browser.navigate(urllib.parse.urljoin(base, page))
        emit("read", page=page, url=browser.evaluate("location.href"), **browser.evaluate(READ_PAGE))
    if args.type_search:
        type_search(args, browser, base)


def type_search(args, browser, base):
    query = args.type_search
    hits = "Array.from(document.querySelectorAll('main[data-search] .msg')).map(m => m.id)"
    browser.navigate(base)
    browser.wait("!!document.querySelector('ul.conversations')", "the conversation list")
    browser.evaluate("window.roostCheckStayed = true; document.querySelector('form.search input[name=q]').focus()")
    for character in query:
        browser.call("Input.insertText", text=character)
        time.sleep(0.04)
    browser.wait("(() => { const m = document.querySelector('main[data-search]'); return !!m && m.dataset.search === %s; })()"
                 % json.dumps(query), "the results of the typed query")
    typed = browser.evaluate(hits)
    stayed = browser.evaluate("window.roostCheckStayed === true && location.pathname === '/'")
    list_hidden = browser.evaluate("document.querySelector('ul.conversations').offsetParent === null")
    notice = browser.evaluate("(() => { const n = document.querySelector('main[data-search] p.notice'); return n ? n.textContent : null; })()")
    # Enter still opens the results page.
    browser.key("Enter", "\r")
    browser.wait("location.pathname === '/search' && document.readyState === 'complete' && window.roostCheckStayed === undefined",
                 "the results page")
    entered = browser.evaluate("Array.from(document.querySelectorAll('main .msg')).map(m => m.id)")
    entered_query = browser.evaluate("new URLSearchParams(location.search).get('q')")
    # On the list again: typing shows results, Esc brings the list back.
    browser.navigate(base)
    browser.wait("!!document.querySelector('ul.conversations')", "the conversation list")
    browser.evaluate("document.querySelector('form.search input[name=q]').focus()")
    for character in query[:3]:
        browser.call("Input.insertText", text=character)
    browser.wait("!!document.querySelector('main[data-search]')", "results while typing")
    browser.key("Escape")
    browser.wait("!document.querySelector('main[data-search]')", "the results to go")
    restored = browser.evaluate("document.querySelector('ul.conversations').offsetParent !== null")
    emit("typed", query=query, hits=typed, stayed=stayed, list_hidden=list_hidden, notice=notice,
         entered=entered, entered_query=entered_query, restored=restored)


def run(args, browser):
    if args.read or args.type_search:
        return read_pages(args, browser)
    shots = args.screenshots
    if shots:
        os.makedirs(shots, exist_ok=True)

    def shot(name):
        return browser.screenshot(os.path.join(shots, name + ".png")) if shots else None

    # The list.
    browser.navigate(args.url)
    browser.wait("document.querySelectorAll('ul.conversations li').length > 0", "the conversation list")
    live_list = bool(browser.wait("document.querySelector('ul.conversations').dataset.liveState === 'open'",
                                  "the list's live stream", timeout=10))
    emit("list", url_has_token="token=" in browser.evaluate("location.href"),
         titles=browser.evaluate("Array.from(document.querySelectorAll('ul.conversations .title')).map(e => e.textContent)"),
         rooms=browser.evaluate("document.querySelectorAll('ul.conversations li.room').length"),
         live=live_list, screenshot=shot("list"))

    origin = browser.evaluate("location.origin")
    if args.list_command:
        if len(args.list_command) != len(args.list_expect or []):
            raise Failure("each --list-command needs its --list-expect")
        initial = list_count(browser, args.conversation)
        seen, statuses = [], []
        for command, expected in zip(args.list_command, args.list_expect):
            done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=args.timeout * 4)
            statuses.append(done.returncode)
            if done.returncode != 0:
                sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
            try:
                browser.wait("(%s) === %d" % (list_count_script(args.conversation), expected),
                             "the list's unread count to become %d" % expected, timeout=args.timeout)
            except Failure:
                pass  # the test judges what was seen
            seen.append(list_count(browser, args.conversation))
        emit("unread", initial=initial, seen=seen, statuses=statuses,
             reloaded=browser.evaluate("performance.getEntriesByType('navigation').length !== 1"),
             screenshot=shot("unread"))

    for number, text in enumerate(args.inspect or []):
        inspect(browser, args.url, text, lambda: shot("inspect-%d" % number))

    if not args.conversation:
        return
    # One conversation, by clicking its entry.
    if args.inspect:
        browser.navigate(args.url)
        browser.wait("document.querySelectorAll('ul.conversations li').length > 0", "the conversation list")
    open_entry(browser, args.conversation)
    conversation_url = browser.evaluate("location.href")
    emit("conversation", url=conversation_url, title=browser.evaluate("document.querySelector('h1').textContent"),
         messages=browser.evaluate("document.querySelectorAll('main .msg').length"),
         first=browser.evaluate("document.querySelector('main .msg .text') && document.querySelector('main .msg .text').textContent"),
         last=browser.evaluate("Array.from(document.querySelectorAll('main .msg .text')).pop().textContent"),
         at_bottom=browser.evaluate("window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 100"),
         scripts=browser.evaluate("Array.from(document.scripts).map(s => s.getAttribute('src'))"),
         has_older=browser.evaluate("!!document.querySelector('a.more.older')"),
         screenshot=shot("conversation"))
    if args.export:
        export(args, browser, origin)
        return

    # Scroll back: each time the top comes into view the script loads the next older page.
    counts = [browser.evaluate("document.querySelectorAll('main .msg').length")]
    for _ in range(args.pages):
        before = counts[-1]
        browser.evaluate("window.scrollTo(0, 0)")
        browser.wait("document.querySelectorAll('main .msg').length > %d" % before, "an older page")
        counts.append(browser.evaluate("document.querySelectorAll('main .msg').length"))
    emit("older", counts=counts, ids_unique=browser.evaluate(
        "(() => { const ids = Array.from(document.querySelectorAll('main .msg')).map(e => e.id); return new Set(ids).size === ids.length; })()"),
         in_order=browser.evaluate(
        "(() => { const ids = Array.from(document.querySelectorAll('main .msg')).map(e => BigInt(e.id.slice(1))); return ids.every((v, i) => i === 0 || ids[i - 1] < v); })()"),
         day_headings_unique=browser.evaluate(
        "(() => { const d = Array.from(document.querySelectorAll('main .day')).map(e => e.textContent); return new Set(d).size === d.length; })()"),
         screenshot=shot("older"))

    # Keyboard: j, j, k.
    for key in ("j", "j", "k"):
        browser.key(key, key)
    emit("keys", selected=browser.evaluate("(document.querySelector('.selected') || {}).id || null"),
         first=browser.evaluate("document.querySelector('main .msg').id"),
         second=browser.evaluate("document.querySelectorAll('main .msg')[1].id"))

    if args.search:
        browser.key("/", "/")
        focused = browser.evaluate("document.activeElement && document.activeElement.name === 'q'")
        browser.call("Input.insertText", text=args.search)
        browser.key("Enter", "\r")
        browser.wait("location.pathname === '/search' && document.readyState === 'complete'", "the search results")
        emit("search", focused_by_slash=focused, url=browser.evaluate("location.href"),
             hits=browser.evaluate("document.querySelectorAll('main .msg').length"),
             marks=browser.evaluate("Array.from(document.querySelectorAll('main mark')).map(m => m.textContent)"),
             texts=browser.evaluate("Array.from(document.querySelectorAll('main .msg .text')).map(e => e.textContent)"),
             screenshot=shot("search"))
        hit = browser.evaluate("""(() => { const a = document.querySelector('main a.context'); if (!a) return null;
            const id = a.closest('.msg').id; a.click(); return id; })()""")
        if hit is None:
            raise Failure("no hit to open in context")
        browser.wait("location.pathname === '/c' && document.readyState === 'complete'", "the hit in context")
        browser.wait("!!document.querySelector('.msg:target')", "the targeted message", timeout=10)
        time.sleep(0.3)  # the script scrolls the target into view after load
        emit("context", hit=hit, target=browser.evaluate("document.querySelector('.msg:target').id"),
             text=browser.evaluate("document.querySelector('.msg:target .text').textContent"),
             on_screen=browser.evaluate("""(() => { const r = document.querySelector('.msg:target').getBoundingClientRect();
                return r.bottom > 0 && r.top < window.innerHeight; })()"""),
             older=browser.evaluate("!!document.querySelector('a.more.older')"),
             newer=browser.evaluate("!!document.querySelector('a.more.newer')"),
             screenshot=shot("context"))

    if args.live_command:
        browser.navigate(conversation_url)
        browser.wait("document.querySelector('main').dataset.liveState === 'open'", "the live stream to open")
        before = browser.evaluate("document.querySelectorAll('main .msg').length")
        started = time.time()
        peer = subprocess.run(args.live_command, shell=True, capture_output=True, text=True, timeout=args.timeout)
        browser.wait("Array.from(document.querySelectorAll('main .msg .text')).some(e => e.textContent.includes(%s))"
                     % json.dumps(args.live_text), "the live message", timeout=args.timeout)
        emit("live", peer_status=peer.returncode, peer_stderr=peer.stderr[-2000:], seconds=round(time.time() - started, 2),
             before=before, after=browser.evaluate("document.querySelectorAll('main .msg').length"),
             reloaded=browser.evaluate("performance.getEntriesByType('navigation').length !== 1"),
             last=browser.evaluate("Array.from(document.querySelectorAll('main .msg .text')).pop().textContent"),
             screenshot=shot("live"))

    if args.update_command:
        browser.navigate(conversation_url)
        browser.wait("document.querySelector('main').dataset.liveState === 'open'", "the live stream to open")
        holding = ("(t) => { const e = Array.from(document.querySelectorAll('main .msg')).find(m => m.querySelector('.text') "
                   "&& m.querySelector('.text').textContent.includes(t)); return e ? e.id : null; }")
        gone_ids = [browser.evaluate("(%s)(%s)" % (holding, json.dumps(t))) for t in args.update_gone or []]
        before = browser.evaluate("document.querySelectorAll('main .msg').length")
        browser.evaluate("document.querySelector('main').dataset.marker = 'same-document'")
        started = time.time()
        peer = subprocess.run(args.update_command, shell=True, capture_output=True, text=True, timeout=args.timeout * 4)
        if peer.returncode != 0:
            sys.stderr.write(peer.stdout[-2000:] + peer.stderr[-2000:])
        condition = "!!(%s)(%s)" % (holding, json.dumps(args.update_text))
        for text in args.update_gone or []:
            condition += " && !(%s)(%s)" % (holding, json.dumps(text))
        try:
            browser.wait(condition, "the corrected text in place", timeout=args.timeout)
            arrived = True
        except Failure:
            arrived = False
        emit("update", peer_status=peer.returncode, arrived=arrived, seconds=round(time.time() - started, 2),
             gone_ids=gone_ids, text_id=browser.evaluate("(%s)(%s)" % (holding, json.dumps(args.update_text))),
             still_there=[browser.evaluate("(%s)(%s)" % (holding, json.dumps(t))) for t in args.update_gone or []],
             before=before, after=browser.evaluate("document.querySelectorAll('main .msg').length"),
             tombstones=browser.evaluate("Array.from(document.querySelectorAll('main .msg')).filter(m => m.querySelector('.tombstone')).map(m => m.id)"),
             edited=browser.evaluate("Array.from(document.querySelectorAll('main .msg')).filter(m => m.querySelector('details.revisions')).map(m => m.id)"),
             ids_unique=browser.evaluate(
                 "(() => { const ids = Array.from(document.querySelectorAll('main .msg')).map(e => e.id); return new Set(ids).size === ids.length; })()"),
             reloaded=browser.evaluate("document.querySelector('main').dataset.marker !== 'same-document'"),
             screenshot=shot("update"))

    if args.mark_read:
        mark_read(args, browser, origin, conversation_url, shot)

    if args.probe:
        probe(args, browser, conversation_url)

    if args.no_script:
        no_script(args, browser, conversation_url)


def list_count_script(text):
    """The unread count the list shows beside the entry containing `text` (0 without a count, null without the entry)."""
    return ("(() => { const a = Array.from(document.querySelectorAll('ul.conversations li a')).find(a => a.textContent.includes(%s)); "
            "if (!a) return null; const c = a.querySelector('.count'); return c ? parseInt(c.textContent, 10) : 0; })()" % json.dumps(text))


def list_count(browser, text):
    return browser.evaluate(list_count_script(text))


def page_unread(browser):
    return browser.evaluate("(() => { const c = document.querySelector('form.mark-read .unread-count'); return c ? Number(c.dataset.unread) : null; })()")


def open_list(browser, origin):
    browser.navigate(origin + "/")
    browser.wait("document.querySelectorAll('ul.conversations li').length > 0", "the conversation list")


def mark_read(args, browser, origin, conversation_url, shot):
    results = {}
    browser.navigate(conversation_url)
    results["page_before"] = page_unread(browser)
    results["text_before"] = browser.evaluate("document.querySelector('form.mark-read').textContent")
    open_list(browser, origin)
    results["list_after_viewing"] = list_count(browser, args.conversation)
    # Forms from elsewhere are refused (the test finds them in the log too).
    cookies = browser.call("Network.getCookies", urls=[origin + "/"])["cookies"]
    port = urllib.parse.urlparse(origin).port
    cookie = next((c for c in cookies if c["name"] == "roost-%d" % port), None)
    header = {"Cookie": "%s=%s" % (cookie["name"], cookie["value"])} if cookie else {}
    query = urllib.parse.parse_qs(urllib.parse.urlparse(conversation_url).query)
    form = {"a": query["a"][0], "j": query["j"][0]}
    results["without_form_token"] = http_request(origin, "POST", "/read", header, urllib.parse.urlencode(form))[0]
    browser.navigate(conversation_url)
    token = browser.evaluate("document.querySelector('form.mark-read input[name=csrf]').value")
    results["cross_origin"] = http_request(origin, "POST", "/read", {**header, "Origin": "http://evil.example"},
                                           urllib.parse.urlencode({**form, "csrf": token}))[0]
    results["by_get"] = http_request(origin, "GET", "/read?" + urllib.parse.urlencode({**form, "csrf": token}), header)[0]
    open_list(browser, origin)
    results["list_after_refusals"] = list_count(browser, args.conversation)
    # The button.
    browser.navigate(conversation_url)
    browser.evaluate("document.querySelector('form.mark-read button').click()")
    browser.wait("document.readyState === 'complete' && !!document.querySelector('form.mark-read') && "
                 "document.querySelector('form.mark-read .unread-count').dataset.unread === '0'", "the page marked read")
    results["page_after"] = page_unread(browser)
    results["url_after"] = browser.evaluate("location.href")
    results["button_disabled"] = browser.evaluate("document.querySelector('form.mark-read button').disabled")
    results["screenshot"] = shot("markread")
    open_list(browser, origin)
    results["list_after"] = list_count(browser, args.conversation)
    emit("markread", conversation_url=conversation_url, **results)


def open_entry(browser, text):
    """Clicks the conversation list entry containing `text` and waits for its page."""
    found = browser.evaluate("""(() => { const items = Array.from(document.querySelectorAll('ul.conversations li a'));
        const hit = items.find(a => a.textContent.includes(%s)); if (!hit) return false; hit.click(); return true; })()"""
                             % json.dumps(text))
    if not found:
        raise Failure("no list entry contains " + text)
    browser.wait("location.pathname === '/c' && document.readyState === 'complete' && document.querySelectorAll('main .msg').length > 0",
                 "the conversation of " + text)


def inspect(browser, url, text, screenshot):
    browser.navigate(url)
    browser.wait("document.querySelectorAll('ul.conversations li').length > 0", "the conversation list")
    browser.wait("Array.from(document.querySelectorAll('ul.conversations img')).every(i => i.complete)", "the pictures of the list", timeout=15)
    entry = browser.evaluate("""(() => { const a = Array.from(document.querySelectorAll('ul.conversations li a'))
        .find(a => a.textContent.includes(%s)); if (!a) return null; const i = a.querySelector('img.avatar');
        return {room: a.closest('li').classList.contains('room'), text: a.textContent,
                avatar: i ? {src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0, width: i.naturalWidth} : null}; })()""" % json.dumps(text))
    open_entry(browser, text)
    # Pictures: wait until each has loaded or failed, then fetch its bytes as the page would and hash them.
    browser.wait("Array.from(document.querySelectorAll('main img')).every(i => i.complete)", "the pictures", timeout=15)
    page = browser.evaluate("""(async () => {
        const hex = async (src) => { const r = await fetch(src); if (!r.ok) return 'HTTP ' + r.status;
            const d = await crypto.subtle.digest('SHA-256', await r.arrayBuffer());
            return Array.from(new Uint8Array(d)).map(b => b.toString(16).padStart(2, '0')).join(''); };
        const images = [];
        for (const i of document.querySelectorAll('main .msg a.file img')) {
            const href = i.closest('a').getAttribute('href');
            images.push({src: i.getAttribute('src'), alt: i.alt, loaded: i.complete && i.naturalWidth > 0,
                         width: i.naturalWidth, height: i.naturalHeight, sha256: await hex(i.getAttribute('src')),
                         href: href, href_sha256: await hex(href)});
        }
        return {
            title: document.querySelector('h1').textContent,
            sub: document.querySelector('header.top .sub').textContent,
            names: Array.from(document.querySelectorAll('main .msg .name')).map(e => ({name: e.textContent,
                occupant: e.classList.contains('occupant'), hue: e.style.getPropertyValue('--hue'), colour: getComputedStyle(e).color})),
            avatars: Array.from(document.querySelectorAll('main .msg.in .avatar')).map(e => getComputedStyle(e).backgroundColor),
            texts: Array.from(document.querySelectorAll('main .msg .text')).map(e => e.textContent),
            outgoing: Array.from(document.querySelectorAll('main .msg.out .text')).map(e => e.textContent),
            images: images,
            files: Array.from(document.querySelectorAll('main .msg a.file')).map(a => ({href: a.getAttribute('href'), text: a.textContent})),
            events: Array.from(document.querySelectorAll('main .event')).map(e => e.textContent),
        }; })()""")
    # Opened at its newest message, and still there once the pictures have loaded and grown the page.
    try:
        page["at_end"] = bool(browser.wait("window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 100",
                                           "the end of the conversation in view", timeout=5))
    except Failure:
        page["at_end"] = False
    page["screenshot"] = screenshot()
    # The timelines, switched on by their links as a reader would.
    for label, key in (("presence", "with_presence"), ("chat states", "with_states")):
        clicked = browser.evaluate("""(() => { const a = Array.from(document.querySelectorAll('nav.tools a'))
            .find(a => a.textContent === 'Show ' + %s); if (!a) return false; a.click(); return true; })()""" % json.dumps(label))
        if not clicked:
            raise Failure("no 'Show %s' link" % label)
        browser.wait("document.readyState === 'complete' && Array.from(document.querySelectorAll('nav.tools a')).some(a => a.textContent === 'Hide ' + %s)"
                     % json.dumps(label), "the page with " + label)
        page[key] = browser.evaluate("Array.from(document.querySelectorAll('main .event')).map(e => e.textContent)")
    emit("inspect", entry=text, list_entry=entry, url=browser.evaluate("location.href"), **page)


def no_script(args, browser, conversation_url):
    """Scripts off (as for a reader without JavaScript): the conversation, its older page by following the
    link, and search by the form's address (a GET form) must all read. The DOM is read through the DevTools
    DOM domain, since page scripts (and so Runtime.evaluate) are off."""
    import re
    browser.call("Emulation.setScriptExecutionDisabled", value=True)

    def load(url):
        loads = browser.loads
        browser.call("Page.navigate", url=url)
        deadline = time.time() + browser.timeout
        while time.time() < deadline:
            time.sleep(0.05)
            browser.call("Page.getFrameTree")  # lets the load event arrive
            if browser.loads == loads:
                continue
            try:
                root = browser.call("DOM.getDocument", depth=-1)["root"]
                return browser.call("DOM.getOuterHTML", nodeId=root["nodeId"])["outerHTML"]
            except Failure:
                continue  # the document was replaced between the two calls
        raise Failure("timed out loading " + url + " without scripts")

    def ids(html):
        return set(re.findall(r'<div class="msg [a-z]+" id="(m[0-9]+)"', html))

    newest = load(conversation_url)
    link = re.search(r'class="more older" rel="prev" href="([^"]+)"', newest)
    older = load(urllib.parse.urljoin(conversation_url, link.group(1).replace("&amp;", "&"))) if link else ""
    search = load(urllib.parse.urljoin(conversation_url, "/search?q=" + urllib.parse.quote(args.search or "")))
    browser.call("Emulation.setScriptExecutionDisabled", value=False)
    emit("noscript", newest=len(ids(newest)), older=len(ids(older)), disjoint=not (ids(newest) & ids(older)),
         live_opened=("liveState" in newest) or ("data-live-state" in newest),
         marks=re.findall(r"<mark>([^<]*)</mark>", search), in_context="in context</a>" in search)


def export(args, browser, origin):
    """The page's export form, submitted as drawn: the fields it holds (FORMAT chosen) with the browser's cookie."""
    fields = browser.evaluate("""(() => { const form = document.querySelector('form[action="/export"]');
        form.querySelector('select[name=format]').value = %s;
        return Array.from(new FormData(form).entries()); })()""" % json.dumps(args.export))
    fields = [(name, value) for name, value in fields]
    parsed = urllib.parse.urlparse(origin)
    cookies = browser.call("Network.getCookies", urls=[origin + "/"])["cookies"]
    cookie = next((c for c in cookies if c["name"] == "roost-%d" % parsed.port), None)
    header = {"Cookie": "%s=%s" % (cookie["name"], cookie["value"])} if cookie else {}
    status, headers, body = http_request(origin, "POST", "/export", {**header, "Origin": origin}, urllib.parse.urlencode(fields))
    emit("export", status=status, fields={k: v for k, v in fields if k != "csrf"}, disposition=headers.get("Content-Disposition"),
         text=body.decode("utf-8", "replace"))


def probe(args, browser, conversation_url):
    parsed = urllib.parse.urlparse(args.url)
    base = "%s://%s" % (parsed.scheme, parsed.netloc)
    cookies = browser.call("Network.getCookies", urls=[base + "/"])["cookies"]
    cookie = next((c for c in cookies if c["name"] == "roost-%d" % parsed.port), None)
    header = {"Cookie": "%s=%s" % (cookie["name"], cookie["value"])} if cookie else {}
    results = {"cookie_http_only": bool(cookie and cookie["httpOnly"]),
               "cookie_same_site": cookie and cookie.get("sameSite"),
               "cookie_readable_by_script": browser.evaluate("document.cookie.includes('roost-')")}
    results["no_cookie"] = http_request(base, "GET", "/")[0]
    results["foreign_host"] = http_request(base, "GET", "/", {**header, "Host": "rebound.example:%d" % parsed.port})[0]
    results["wrong_token"] = http_request(base, "GET", "/?token=" + "0" * 64)[0]
    results["with_cookie"] = http_request(base, "GET", "/", header)[0]
    path = urllib.parse.urlparse(conversation_url)
    query = urllib.parse.parse_qs(path.query)
    form = {"a": query["a"][0], "j": query["j"][0], "format": "txt"}
    results["export_without_form_token"] = http_request(base, "POST", "/export", header, urllib.parse.urlencode(form))[0]
    results["export_cross_origin"] = http_request(base, "POST", "/export", {**header, "Origin": "http://evil.example"},
                                                  urllib.parse.urlencode({**form, "csrf": "x"}))[0]
    results["export_get"] = http_request(base, "GET", "/export?" + urllib.parse.urlencode(form), header)[0]
    form_token = browser.evaluate("(document.querySelector('input[name=csrf]') || {}).value || null")
    if not form_token:
        browser.navigate(conversation_url)
        form_token = browser.evaluate("document.querySelector('input[name=csrf]').value")
    status, headers, body = http_request(base, "POST", "/export", header, urllib.parse.urlencode({**form, "csrf": form_token}))
    results["export"] = status
    results["export_disposition"] = headers.get("Content-Disposition")
    results["export_text"] = body.decode("utf-8", "replace")[:20000]
    # A format that writes a folder (html) comes as a tar archive: its members, as Python's tarfile reads them.
    import io
    import tarfile
    status, headers, body = http_request(base, "POST", "/export", header,
                                         urllib.parse.urlencode({**form, "format": "html", "csrf": form_token}))
    results["export_html"] = status
    results["export_html_disposition"] = headers.get("Content-Disposition")
    try:
        with tarfile.open(fileobj=io.BytesIO(body)) as tar:
            results["export_html_members"] = sorted(tar.getnames())
            page = next((m for m in tar.getmembers() if m.name.endswith(".html") and not m.name.endswith("index.html")), None)
            results["export_html_page"] = tar.extractfile(page).read().decode("utf-8", "replace")[-20000:] if page else None
    except tarfile.TarError as error:
        results["export_html_members"] = "not a tar archive: %s" % error
    results["path_as_file"] = http_request(base, "GET", "/file/../../etc/passwd", header)[0]
    results["file_bad_id"] = http_request(base, "GET", "/file/1/99", header)[0]
    status, headers, _ = http_request(base, "GET", "/", header)
    results["csp"] = headers.get("Content-Security-Policy")
    emit("probe", **results)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--inspect", action="append", metavar="TEXT")
    parser.add_argument("--conversation")
    parser.add_argument("--pages", type=int, default=3)
    parser.add_argument("--search")
    parser.add_argument("--live-command")
    parser.add_argument("--live-text")
    parser.add_argument("--list-command", action="append")
    parser.add_argument("--list-expect", action="append", type=int)
    parser.add_argument("--update-command")
    parser.add_argument("--update-text")
    parser.add_argument("--update-gone", action="append")
    parser.add_argument("--mark-read", action="store_true")
    parser.add_argument("--screenshots")
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--export", metavar="FORMAT")
    parser.add_argument("--no-script", action="store_true")
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--read", action="append", metavar="PAGE")
    parser.add_argument("--type-search", metavar="QUERY")
    args = parser.parse_args()
    browser = None
    try:
        browser = Chromium(args.timeout)
        run(args, browser)
        emit("console", problems=browser.problems, retried=browser.navigations)
        return 0
    except (Failure, websocket.WebSocketException, OSError, subprocess.TimeoutExpired) as error:
        emit("failed", error=str(error), problems=browser.problems if browser else [], pages=browser.urls if browser else [])
        return 1
    finally:
        if browser:
            browser.close()


if __name__ == "__main__":
    sys.exit(main())
