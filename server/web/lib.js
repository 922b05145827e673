/* server/web/lib.js -- the web page's pure helpers: DOM building, SSE parsing,
 * the icicle layout and formatting.
 *
 * No network and no page state here: app.js does that.  Loaded as a classic
 * script (window.RW) and by node for tests/browser/unit.test.js
 * (module.exports), so everything is plain ES2020 with no browser globals at
 * load time.
 */
"use strict";

(function (root) {
    const RW = {};

    /* h(tag, attrs, ...children): an element.  Strings become text nodes, so
     * nothing from the server is ever parsed as HTML.  attrs: "class",
     * "dataset" (object), "style" (object of CSS properties, set through the
     * CSSOM so a strict style-src policy allows them), "on*" (listener
     * functions), booleans (present when true), everything else through
     * setAttribute. */
    RW.h = function h(tag, attrs, ...children) {
        const el = root.document.createElement(tag);
        for (const [k, v] of Object.entries(attrs || {})) {
            if (v === null || v === undefined || v === false) continue;
            if (k === "class") el.className = v;
            else if (k === "dataset") Object.assign(el.dataset, v);
            else if (k === "style" && typeof v === "object")
                for (const [p, pv] of Object.entries(v)) el.style.setProperty(p, String(pv));
            else if (k.startsWith("on") && typeof v === "function")
                el.addEventListener(k.slice(2), v);
            else if (v === true) el.setAttribute(k, "");
            else el.setAttribute(k, String(v));
        }
        RW.append(el, children);
        return el;
    };

    /* Append CHILDREN (nodes, strings, numbers, nested arrays; null skipped). */
    RW.append = function append(el, children) {
        for (const c of children) {
            if (c === null || c === undefined || c === false) continue;
            if (Array.isArray(c)) RW.append(el, c);
            else if (typeof c === "object") el.appendChild(c);
            else el.appendChild(root.document.createTextNode(String(c)));
        }
        return el;
    };

    /* Replace every child of EL by CHILDREN. */
    RW.replace = function replace(el, ...children) {
        el.replaceChildren();
        return RW.append(el, children);
    };

    /* The server-sent events parser of the HTML standard ("Parsing an event
     * stream", 9.2.6), fed text in arbitrary chunks: a line ends at CRLF, LF
     * or CR (a CRLF split across chunks counts once); a blank line
     * dispatches the event if it has data; ":" lines are comments.  ONEVENT
     * gets {type, data, id}; "retry" is kept in .retryMs. */
    RW.SseParser = class SseParser {
        constructor(onevent) {
            this.onevent = onevent;
            this.buf = ""; /* the unfinished line */
            this.skipLF = false; /* a chunk ended in CR: an LF first in the next is its pair */
            this.started = false;
            this.type = "";
            this.data = [];
            this.lastId = "";
            this.retryMs = null;
        }

        feed(text) {
            if (!text) return;
            if (!this.started) {
                this.started = true;
                if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
            }
            let start = 0;
            if (this.skipLF) {
                this.skipLF = false;
                if (text[0] === "\n") start = 1;
            }
            for (let i = start; i < text.length; i++) {
                const c = text[i];
                if (c !== "\n" && c !== "\r") continue;
                this.line(this.buf + text.slice(start, i));
                this.buf = "";
                if (c === "\r") {
                    if (i + 1 === text.length) this.skipLF = true;
                    else if (text[i + 1] === "\n") i++;
                }
                start = i + 1;
            }
            this.buf += text.slice(start);
        }

        line(s) {
            if (s === "") {
                if (this.data.length > 0)
                    this.onevent({
                        type: this.type || "message",
                        data: this.data.join("\n"),
                        id: this.lastId,
                    });
                this.type = "";
                this.data = [];
                return;
            }
            if (s[0] === ":") return;
            const colon = s.indexOf(":");
            const field = colon < 0 ? s : s.slice(0, colon);
            let value = colon < 0 ? "" : s.slice(colon + 1);
            if (value[0] === " ") value = value.slice(1);
            if (field === "event") this.type = value;
            else if (field === "data") this.data.push(value);
            else if (field === "id" && !value.includes("\0")) this.lastId = value;
            else if (field === "retry" && /^[0-9]+$/.test(value)) this.retryMs = Number(value);
        }
    };

    /* The icicle layout of a merged tree ({"function", "count", "children"}):
     * one cell per node, {node, depth, x, w, path} with x and w fractions of the
     * root's count; children left to right in the order given.  Cells narrower
     * than MINW are dropped with their subtrees.  Returns {cells, depth}. */
    RW.icicleLayout = function icicleLayout(tree, minw) {
        const cells = [];
        let maxDepth = 0;
        const total = tree && tree.count > 0 ? tree.count : 1;
        const walk = (node, depth, x, path) => {
            const w = (node.count || 0) / total;
            if (w < (minw || 0)) return;
            const p = path.concat(node.function === null ? "??" : String(node.function));
            cells.push({ node, depth, x, w, path: p });
            if (depth > maxDepth) maxDepth = depth;
            let cx = x;
            for (const c of node.children || []) {
                walk(c, depth + 1, cx, p);
                cx += (c.count || 0) / total;
            }
        };
        if (tree) walk(tree, 0, 0, []);
        return { cells, depth: maxDepth + 1 };
    };

    /* Find the node at PATH (function names from the root, root included). */
    RW.treeFind = function treeFind(tree, path) {
        let node = tree;
        if (!node || path.length === 0 || String(node.function) !== path[0]) return null;
        for (const name of path.slice(1)) {
            node = (node.children || []).find(
                (c) => (c.function === null ? "??" : String(c.function)) === name
            );
            if (!node) return null;
        }
        return node;
    };

    /* Number of nodes in TREE. */
    RW.treeSize = function treeSize(tree) {
        if (!tree) return 0;
        let n = 1;
        for (const c of tree.children || []) n += treeSize(c);
        return n;
    };

    /* The last part of a path ("/usr/lib/x86_64-linux-gnu/libc.so.6" ->
     * "libc.so.6"); null stays null. */
    RW.basename = function basename(path) {
        if (path === null || path === undefined) return null;
        const s = String(path);
        const i = s.lastIndexOf("/");
        return i >= 0 && i + 1 < s.length ? s.slice(i + 1) : s;
    };

    /* A frame's source position as one string ("fixture.c:312"), from the
     * fields a stack document may carry ("file"/"line", or "source" as a
     * string or {"file", "line"}); null when it has none. */
    RW.frameSource = function frameSource(f) {
        let file = f.file;
        let line = f.line;
        if (f.source && typeof f.source === "object") {
            file = f.source.file;
            line = f.source.line;
        } else if (typeof f.source === "string") {
            return f.source;
        }
        if (file === null || file === undefined) return null;
        return line === null || line === undefined
            ? RW.basename(file)
            : RW.basename(file) + ":" + line;
    };

    /* The text of one frame's function with its offset ("c+8", "?? " when
     * unknown). */
    RW.frameLabel = function frameLabel(f) {
        if (f.function === null || f.function === undefined) return "??";
        return f.offset === null || f.offset === undefined || f.offset === 0
            ? String(f.function)
            : f.function + "+" + f.offset;
    };

    /* A stop signal as the stub reports it (GDB's own numbering, the same on
     * every host: gdb/include/gdb/signals.def) by its name: 5 -> "SIGTRAP". */
    const GDB_SIGNALS = [null, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT",
        "SIGEMT", "SIGFPE", "SIGKILL", "SIGBUS", "SIGSEGV", "SIGSYS", "SIGPIPE", "SIGALRM",
        "SIGTERM", "SIGURG", "SIGSTOP", "SIGTSTP", "SIGCONT", "SIGCHLD"];
    RW.signalName = function signalName(n) {
        if (typeof n !== "number" || n <= 0) return null;
        return GDB_SIGNALS[n] || "signal " + n;
    };

    /* States a target can be in, as GET /v1/targets writes them. */
    RW.STATES = ["connecting", "stopped", "running", "exited", "link-lost"];

    /* The link that opens speedscope (vendored at speedscope/ beside the
     * page) on the profile at API_PATH ("v1/samples/3?format=speedscope"),
     * resolved against the page's own address BASE.  speedscope splits its
     * hash at "&" and "=" before it decodes a value, so the profile's URL is
     * given whole-encoded, and as an absolute path: speedscope fetches it
     * relative to its own page, on the same origin. */
    RW.speedscopeHref = function speedscopeHref(base, apiPath, title) {
        const u = new URL(apiPath, base);
        const page = new URL("speedscope/index.html", base);
        let hash = "#profileURL=" + encodeURIComponent(u.pathname + u.search);
        if (title) hash += "&title=" + encodeURIComponent(title);
        return page.pathname + hash;
    };

    /* A sample run's progress as a fraction 0..1 from its event or record
     * (elapsed or ticks against seconds and hz); 1 once it is not running. */
    RW.runProgress = function runProgress(run) {
        if (!run || (run.state && run.state !== "running")) return 1;
        const secs = Number(run.seconds);
        let f = 0;
        if (typeof run.elapsed === "number" && secs > 0) f = run.elapsed / secs;
        else if (typeof run.ticks === "number" && secs > 0 && Number(run.hz) > 0)
            f = run.ticks / (secs * Number(run.hz));
        return Math.max(0, Math.min(1, f));
    };

    if (typeof module === "object" && module.exports) module.exports = RW;
    else root.RW = RW;
})(typeof window === "object" ? window : globalThis);
