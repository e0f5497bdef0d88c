/// The web view's additions to the export's styles, and its one script (served from /static/roost.js, the
/// only script the Content-Security-Policy allows). Pages read fully without the script; it adds keyboard
/// shortcuts, loading older messages while scrolling up, search as you type, and live updates (Server-Sent Events).
enum WebAssets {
    /// Scripts from this server only; styles inline (as in exports); images from here or data: URLs;
    /// connections (fetch, EventSource) to here; forms post here; never framed; no <base>.
    static let pagePolicy = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; "
        + "connect-src 'self'; form-action 'self'; base-uri 'none'"
    /// The header adds what a `<meta>` policy cannot say: never framed.
    static let contentSecurityPolicy = pagePolicy + "; frame-ancestors 'none'"

    static let css = """
    header.top form.search{margin-left:auto}
    header.top input[type=search]{font:inherit;font-size:.9rem;padding:.35rem .7rem;border:1px solid var(--line);border-radius:1rem;background:var(--in);color:var(--fg);width:min(20rem,42vw)}
    nav.tools{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;max-width:46rem;margin:.5rem auto 0;padding:0 .75rem;font-size:.85rem;color:var(--muted)}
    nav.tools form{display:inline-flex;gap:.3rem;align-items:center;margin:0}
    nav.tools select,nav.tools button{font:inherit;font-size:.85rem}
    a.more{display:block;text-align:center;margin:.8rem 0;font-size:.85rem}
    .selected{outline:2px solid var(--accent);outline-offset:2px;border-radius:.6rem}
    .msg:target .bubble{outline:2px solid var(--accent)}
    mark{background:#ffe58a;color:inherit;border-radius:.15rem}
    @media (prefers-color-scheme:dark){mark{background:#7a6412}}
    .badge{background:var(--line);border-radius:.6rem;padding:0 .4rem;font-size:.7rem}
    .snippet{color:var(--muted);font-size:.85rem}
    section.hits{margin:1.2rem 0}
    section.hits h2{font-size:.95rem;margin:0 0 .3rem;color:var(--fg)}
    section.hits .detail{color:var(--muted);font-weight:normal;font-size:.8rem}
    p.notice{background:var(--in);border:1px solid var(--line);border-radius:.6rem;padding:.6rem .8rem}
    pre.caret{overflow-x:auto;font-size:.85rem}
    .live{color:var(--muted);font-size:.75rem;text-align:center;margin:.5rem 0}
    ul.conversations .count{display:inline-block;margin-left:.45rem;min-width:1.1rem;padding:0 .4rem;border-radius:.7rem;background:var(--accent);color:#fff;font-size:.75rem;font-weight:600;text-align:center;line-height:1.25rem;vertical-align:.1rem}
    ul.conversations li.unread .title{font-weight:700}
    form.mark-read .unread-count{margin-right:.3rem}
    """

    static let script = #"""
    // roost serve: progressive enhancement only; every page reads without this script.
    (function () {
      'use strict';
      var main = document.querySelector('main');

      // Keyboard: "/" focuses the search box, j/k move through conversations, messages or hits, Enter opens.
      var selected = null;
      function items() {
        // What is on screen: not the page that search results stand in for (hidden).
        return Array.prototype.slice.call(document.querySelectorAll('ul.conversations li, main .msg'))
          .filter(function (element) { return element.offsetParent !== null; });
      }
      function select(element) {
        if (selected) selected.classList.remove('selected');
        selected = element;
        if (!element) return;
        element.classList.add('selected');
        element.scrollIntoView({block: 'nearest'});
      }
      document.addEventListener('keydown', function (event) {
        var target = event.target;
        if (event.ctrlKey || event.metaKey || event.altKey) return;
        if (target.closest && target.closest('input, textarea, select')) {
          if (event.key === 'Escape') target.blur();
          return;
        }
        if (event.key === '/') {
          var box = document.querySelector('input[name=q]');
          if (box) { event.preventDefault(); box.focus(); box.select(); }
        } else if (event.key === 'j' || event.key === 'k') {
          var list = items();
          if (!list.length) return;
          var index = list.indexOf(selected);
          if (index < 0) index = event.key === 'j' ? -1 : list.length;
          index += event.key === 'j' ? 1 : -1;
          select(list[Math.max(0, Math.min(list.length - 1, index))]);
        } else if (event.key === 'Enter' && selected) {
          var link = selected.querySelector('a.context') || selected.querySelector('a');
          if (link) link.click();
        }
      });

      // Older messages load as the reader scrolls up (the link works by itself without the script).
      function dropRepeatedDay() {
        // The older page may end on the day the current page begins with: keep one heading.
        var days = main.querySelectorAll('.day');
        for (var i = 1; i < days.length; i++) {
          if (days[i].textContent === days[i - 1].textContent) { days[i].remove(); return; }
        }
      }
      function loadOlder(link) {
        if (link.dataset.loading) return;
        link.dataset.loading = '1';
        anchor = null;  // the reader went back in time: pictures loading below must not pull the view down
        fetch(link.href + '&fragment=1', {credentials: 'same-origin'}).then(function (response) {
          if (!response.ok) throw new Error(response.status);
          var next = response.headers.get('X-Roost-Older');
          return response.text().then(function (html) {
            var height = document.documentElement.scrollHeight;
            var template = document.createElement('template');
            template.innerHTML = html;
            link.after(template.content);
            dropRepeatedDay();
            window.scrollBy(0, document.documentElement.scrollHeight - height);
            if (next) { link.href = next; delete link.dataset.loading; observeOlder(link); } else { link.remove(); }
          });
        }).catch(function () { delete link.dataset.loading; });
      }
      var observer = window.IntersectionObserver ? new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (entry.isIntersecting) { observer.unobserve(entry.target); loadOlder(entry.target); }
        });
      }) : null;
      function observeOlder(link) { if (observer) observer.observe(link); }
      var older = document.querySelector('a.more.older');
      if (older) {
        older.addEventListener('click', function (event) { event.preventDefault(); loadOlder(older); });
      }

      // A conversation opens at its newest message, or at the message asked for (open in context). Pictures
      // that load afterwards grow the page: until the reader scrolls, the view stays where it opened.
      if (main && main.dataset.conversation !== undefined) {
        var target = location.hash && document.getElementById(location.hash.slice(1));
        var anchor = target || (main.dataset.newer ? null : 'end');
        var place = function () {
          if (anchor === 'end') { window.scrollTo(0, document.documentElement.scrollHeight); } else if (anchor) { anchor.scrollIntoView({block: 'center'}); }
        };
        place();
        document.addEventListener('load', function (event) { if (event.target.tagName === 'IMG') place(); }, true);
        ['wheel', 'touchmove', 'keydown', 'mousedown'].forEach(function (name) {
          window.addEventListener(name, function () { anchor = null; }, {once: true, passive: true});
        });
        requestAnimationFrame(function () { if (older) observeOlder(older); });
      }

      // Search as you type: the results for the query typed so far, fetched (debounced) from /search — the page Enter
      // opens, with the query language and the one query builder of `roost search` — and shown in place. On the list
      // or a conversation they stand in for the page, which comes back when the box is emptied (or Esc clears it).
      var box = document.querySelector('form.search input[name=q]');
      if (box && window.fetch && window.DOMParser) {
        var onSearchPage = location.pathname === '/search';
        var timer = null, asked = 0, shownQuery = box.value, hiddenPage = null;
        var showResults = function (html, query) {
          var fetched = new DOMParser().parseFromString(html, 'text/html');
          var fresh = fetched.querySelector('main');
          if (!fresh) return;
          fresh.dataset.search = query;
          var current = document.querySelector('main[data-search]') || (onSearchPage ? document.querySelector('main') : null);
          if (current) {
            current.replaceWith(fresh);
          } else {
            hiddenPage = Array.prototype.slice.call(document.querySelectorAll('body > main, body > nav.tools'));
            hiddenPage.forEach(function (element) { element.hidden = true; });
            document.querySelector('header.top').after(fresh);
          }
          if (onSearchPage) {
            var sub = document.querySelector('header.top .sub'), freshSub = fetched.querySelector('header.top .sub');
            if (sub && freshSub) sub.textContent = freshSub.textContent;
            document.title = fetched.title;
            history.replaceState(null, '', '/search?q=' + encodeURIComponent(query));
          }
          if (selected) selected.classList.remove('selected');
          selected = null;
        };
        var restorePage = function () {
          var results = document.querySelector('main[data-search]');
          if (results) results.remove();
          if (hiddenPage) hiddenPage.forEach(function (element) { element.hidden = false; });
          hiddenPage = null;
        };
        var searchNow = function () {
          var query = box.value;
          if (query === shownQuery) return;
          if (!onSearchPage && !query.trim()) { shownQuery = query; asked++; restorePage(); return; }
          var ticket = ++asked;
          fetch('/search?q=' + encodeURIComponent(query) + '&typing=1', {credentials: 'same-origin'}).then(function (response) {
            // A query not (yet) well formed: the page says where it is wrong, shown like results.
            return response.text();
          }).then(function (html) {
            if (ticket !== asked) return;  // an answer to an older query: a newer one is on its way
            shownQuery = query;
            showResults(html, query);
          }).catch(function () {});
        };
        box.addEventListener('input', function () {
          clearTimeout(timer);
          timer = setTimeout(searchNow, 250);
        });
        box.addEventListener('keydown', function (event) {
          if (event.key === 'Escape' && !onSearchPage && box.value) { box.value = ''; clearTimeout(timer); searchNow(); }
          if (event.key === 'Enter') clearTimeout(timer);
        });
      }

      // Live: new messages of this conversation, or a changed list of conversations.
      var end = document.getElementById('end');
      if (main && main.dataset.live && window.EventSource) {
        var source = new EventSource(main.dataset.live);
        source.onopen = function () { main.dataset.liveState = 'open'; };
        source.onmessage = function (event) {
          var atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
          end.insertAdjacentHTML('beforebegin', event.data);
          if (atBottom) window.scrollTo(0, document.documentElement.scrollHeight);
          // New messages from others are unread until marked: the button comes back.
          var count = document.querySelector('form.mark-read .unread-count');
          var incoming = (event.data.match(/class="msg in[" ]/g) || []).length;
          if (count && incoming) {
            var unread = Number(count.dataset.unread || 0) + incoming;
            count.dataset.unread = unread;
            count.textContent = unread + ' unread';
            document.querySelector('form.mark-read button').disabled = false;
          }
        };
        // A correction, retraction or reaction: the message is drawn anew and takes its old place.
        source.addEventListener('changed', function (event) {
          var template = document.createElement('template');
          template.innerHTML = event.data;
          Array.prototype.forEach.call(template.content.querySelectorAll('.msg'), function (fresh) {
            var old = document.getElementById(fresh.id);
            if (!old) return;
            if (old === selected) { fresh.classList.add('selected'); selected = fresh; }
            old.replaceWith(fresh);
          });
        });
      }
      var conversations = document.querySelector('ul.conversations[data-live]');
      if (conversations && window.EventSource) {
        var listSource = new EventSource(conversations.dataset.live);
        listSource.onopen = function () { conversations.dataset.liveState = 'open'; };
        listSource.addEventListener('conversations', function () {
          fetch('/?fragment=1', {credentials: 'same-origin'}).then(function (response) {
            return response.ok ? response.text() : null;
          }).then(function (html) {
            if (html === null) return;
            var template = document.createElement('template');
            template.innerHTML = html;
            var fresh = template.content.querySelector('ul.conversations');
            if (!fresh) return;
            // The fresh list takes the place of the old one, and of its stream state.
            if (conversations.dataset.liveState) fresh.dataset.liveState = conversations.dataset.liveState;
            conversations.replaceWith(fresh);
            conversations = fresh;
            selected = null;
          });
        });
      }
    })();
    """#
}
