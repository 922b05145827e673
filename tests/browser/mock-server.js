#!/usr/bin/env node
/* tests/browser/mock-server.js -- a stand-in for rspwalkd's HTTP API with canned
 * targets and stacks, for developing the web page and for the page-only test
 * (tests/browser/run --mock).  No dependencies beyond node.
 *
 * Not rspwalkd: no stubs, no store; it serves server/web/ and answers the /v1
 * endpoints the page uses from the data below.  POST /mock/state {"id",
 * "state", "error"} changes a target's state (and sends its event), as a dying
 * stub would.
 *
 * Usage: mock-server.js [--listen HOST:PORT] [--token TOKEN] [--web DIR]
 * Prints "mock: listening on http://HOST:PORT/" on stderr when ready.
 */
"use strict";

const http = require("http");
const fs = require("fs");
const path = require("path");

function parseArgs(argv) {
    const o = { listen: "127.0.0.1:0", token: null, web: path.join(__dirname, "../../server/web") };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === "--listen") o.listen = argv[++i];
        else if (a === "--token") o.token = argv[++i];
        else if (a === "--web") o.web = argv[++i];
        else {
            process.stderr.write(`mock: unknown argument ${a}\n`);
            process.exit(2);
        }
    }
    return o;
}

const opts = parseArgs(process.argv.slice(2));
const EXE = "/srv/fixtures/threads-s0-O0-dyn";
const LIBC = "/lib/x86_64-linux-gnu/libc.so.6";

function frame(level, fn, off, module, extra) {
    const pc = "0x" + (0x401000 + level * 0x40 + off).toString(16);
    return Object.assign(
        {
            level,
            pc,
            sp: "0x7ffd5a3f" + (1000 + level * 16).toString(16),
            fp: "0x7ffd5a3f" + (1000 + level * 16 + 8).toString(16),
            function: fn,
            symbol: fn,
            offset: fn === null ? null : off,
            module,
            stepper: level === 0 ? null : "debug",
            trust: level === 0 ? "registers" : "cfi",
            kind: "normal",
        },
        extra || {}
    );
}

function chain(names) {
    /* names: [function, module, offset, extra] top first */
    return names.map((n, i) => frame(i, n[0], n[2] === undefined ? 8 + i : n[2], n[1], n[3]));
}

function threadsDoc(target) {
    return {
        version: 1,
        arch: "x86_64",
        target,
        threads: [
            {
                id: "p3e8.3e8",
                lwp: 1000,
                stopped: true,
                end: "bottom",
                frames: chain([
                    ["c", EXE, 8, { file: "fixtures/src/fixture.c", line: 315 }],
                    ["b", EXE, 19, { file: "fixtures/src/fixture.c", line: 322 }],
                    ["a", EXE, 19, { file: "fixtures/src/fixture.c", line: 329 }],
                    ["main", EXE, 201, { file: "fixtures/src/fixture.c", line: 352 }],
                    ["__libc_start_call_main", LIBC, 122],
                    ["__libc_start_main_impl", LIBC, 133],
                    ["_start", EXE, 33],
                ]),
            },
            {
                id: "p3e8.3e9",
                lwp: 1001,
                stopped: false,
                end: "bottom",
                frames: chain([
                    ["__GI___libc_read", LIBC, 77],
                    ["t1_inner", EXE, 35],
                    ["t1_outer", EXE, 23],
                    ["t1_main", EXE, 30],
                    ["start_thread", LIBC, 727],
                    ["clone3", LIBC, 44],
                ]),
            },
            {
                id: "p3e8.3ea",
                lwp: 1002,
                stopped: false,
                end: "bottom",
                frames: chain([
                    ["__GI___clock_nanosleep", LIBC, 101],
                    ["__GI___nanosleep", LIBC, 23],
                    ["t2_inner", EXE, 48],
                    ["t2_mid", EXE, 23],
                    ["t2_outer", EXE, 23],
                    ["t2_main", EXE, 30],
                    ["start_thread", LIBC, 727],
                    ["clone3", LIBC, 44],
                ]),
            },
            {
                id: "p3e8.3eb",
                lwp: 1003,
                stopped: false,
                end: "bottom",
                frames: chain([
                    ["__futex_abstimed_wait_common", LIBC, 344],
                    ["__pthread_cond_wait_common", LIBC, 650],
                    ["___pthread_cond_wait", LIBC, 29],
                    ["t3_inner", EXE, 62],
                    ["t3_outer", EXE, 23],
                    ["t3_main", EXE, 30],
                    ["start_thread", LIBC, 727],
                    ["clone3", LIBC, 44],
                ]),
            },
        ],
        stats: { round_trips: 6, packets: 14 },
    };
}

/* A target whose names try to be HTML: the page must show them as text. */
function hostileDoc(target) {
    return {
        version: 1,
        arch: "x86_64",
        target,
        threads: [
            {
                id: "1",
                lwp: 1,
                stopped: true,
                end: "no-stepper",
                frames: chain([
                    ['<img src=x onerror="window.__pwned=1">', "/tmp/<b>evil</b>", 4],
                    [null, null, 0],
                    ["main", "/tmp/<b>evil</b>", 12],
                ]),
            },
        ],
        stats: { round_trips: 2, packets: 4 },
    };
}

const targets = new Map();
let nextId = 1;

function addTarget(spec, state, docFn) {
    const id = nextId++;
    const t = {
        id,
        name: spec.name || spec.target,
        target: spec.target,
        exe: spec.exe || null,
        sysroot: spec.sysroot || null,
        arch: state === "connecting" ? null : "x86_64",
        stub: state === "connecting" ? null : "gdbserver",
        state,
        error: null,
        signal: state === "stopped" ? 5 : null,
    };
    targets.set(id, { t, docFn });
    return t;
}

addTarget({ target: "127.0.0.1:40001", name: "threads", exe: EXE, sysroot: "/" }, "stopped",
    threadsDoc);
addTarget({ target: "127.0.0.1:40002", name: "<b>hostile</b> names" }, "stopped", hostileDoc);
addTarget({ target: "127.0.0.1:40003", name: "worker" }, "running", threadsDoc);

/* ---- events ---- */
const clients = new Set();

function sendEvent(type, data) {
    const text = `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const res of clients) res.write(text);
}

function setState(id, state, error) {
    const e = targets.get(id);
    if (!e) return false;
    e.t.state = state;
    e.t.error = error || null;
    e.t.signal = state === "stopped" ? 17 : null;
    if (state !== "connecting") {
        e.t.arch = e.t.arch || "x86_64";
        e.t.stub = e.t.stub || "gdbserver";
    }
    /* as rspwalkd: an error only for the states that have one, a stop's signal */
    const ev = { id, state };
    if (e.t.error && state !== "stopped" && state !== "running") ev.error = e.t.error;
    if (state === "stopped") ev.signal = e.t.signal;
    sendEvent("target", ev);
    return true;
}

/* ---- the merged tree ---- */
function ranges(list) {
    const out = [];
    for (let i = 0; i < list.length; i++) {
        let j = i;
        while (j + 1 < list.length && list[j + 1] === list[j] + 1) j++;
        out.push(i === j ? String(list[i]) : `${list[i]}-${list[j]}`);
        i = j;
    }
    return "[" + out.join(",") + "]";
}

function buildTree() {
    const index = [];
    const root = { function: "/", module: null, taskList: [], children: [] };
    for (const { t, docFn } of targets.values()) {
        if (!docFn || !["stopped", "running"].includes(t.state)) continue;
        const doc = docFn(t.target);
        for (const th of doc.threads) {
            const task = index.length;
            index.push({ task, target: t.id, pid: 1000, thread: th.id });
            root.taskList.push(task);
            let node = root;
            for (const f of th.frames.slice().reverse()) {
                let c = node.children.find((x) => x.function === f.function);
                if (!c) {
                    c = { function: f.function, module: f.module, taskList: [], children: [] };
                    node.children.push(c);
                }
                c.taskList.push(task);
                node = c;
            }
        }
    }
    const out = (n) => ({
        function: n.function,
        module: n.module,
        count: n.taskList.length,
        tasks: ranges(n.taskList),
        children: n.children.map(out),
    });
    const tree = out(root);
    delete tree.module;
    return { version: 1, tasks: index.length, tasks_index: index, tree };
}

/* ---- HTTP ---- */
const TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
};

function json(res, status, body) {
    const text = body === undefined ? "" : JSON.stringify(body);
    res.writeHead(status, {
        "Content-Type": "application/json",
        "Cache-Control": "no-store",
    });
    res.end(text);
}

function readBody(req) {
    return new Promise((resolve) => {
        let s = "";
        req.on("data", (c) => (s += c));
        req.on("end", () => resolve(s));
    });
}

function serveStatic(res, urlPath) {
    const name = urlPath === "/" ? "index.html" : urlPath.slice(1);
    if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(name) || name.includes("..")) {
        return json(res, 404, { error: `no such page: ${urlPath}` });
    }
    const file = path.join(opts.web, name);
    fs.readFile(file, (err, data) => {
        if (err) return json(res, 404, { error: `no such page: ${urlPath}` });
        res.writeHead(200, {
            "Content-Type": TYPES[path.extname(file)] || "application/octet-stream",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'self'; img-src 'self' data:",
        });
        res.end(data);
    });
}

async function handle(req, res) {
    const url = new URL(req.url, "http://mock");
    const p = url.pathname;
    if (!p.startsWith("/v1/") && !p.startsWith("/mock/")) return serveStatic(res, p);
    if (opts.token && req.headers.authorization !== "Bearer " + opts.token)
        return json(res, 401, { error: "this server needs a bearer token" });
    let m;
    if (p === "/v1/events" && req.method === "GET") {
        res.writeHead(200, {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
        });
        res.write(": rspwalkd mock events\n\n");
        clients.add(res);
        req.on("close", () => clients.delete(res));
        return;
    }
    if (p === "/v1/targets" && req.method === "GET")
        return json(res, 200, { targets: Array.from(targets.values(), (e) => e.t) });
    if (p === "/v1/targets" && req.method === "POST") {
        let spec;
        try {
            spec = JSON.parse(await readBody(req));
        } catch (e) {
            return json(res, 400, { error: "body: not JSON" });
        }
        if (!spec || typeof spec.target !== "string" || !spec.target)
            return json(res, 400, { error: 'body: "target" missing' });
        const t = addTarget(spec, "connecting", null);
        setTimeout(() => {
            if (targets.has(t.id))
                setState(t.id, "link-lost", `connect ${spec.target}: Connection refused`);
        }, 300);
        return json(res, 201, { id: t.id });
    }
    if ((m = /^\/v1\/targets\/([0-9]+)(\/[a-z]+)?$/.exec(p))) {
        const id = Number(m[1]);
        const e = targets.get(id);
        if (!e) return json(res, 404, { error: `no target ${m[1]}` });
        const sub = m[2] || "";
        if (sub === "" && req.method === "DELETE") {
            targets.delete(id);
            sendEvent("target", { id, state: "deleted" });
            res.writeHead(204);
            return res.end();
        }
        if (sub === "" && req.method === "GET") return json(res, 200, e.t);
        if (sub === "/stacks" && req.method === "GET") {
            if (!e.docFn || !["stopped", "running"].includes(e.t.state))
                return json(res, 409, { error: `target ${id} is ${e.t.state}` });
            return json(res, 200, e.docFn(e.t.target));
        }
        if (sub === "/resume" && req.method === "POST") {
            if (e.t.state !== "stopped")
                return json(res, 409, { error: `target ${id} is ${e.t.state}` });
            setTimeout(() => setState(id, "running"), 50);
            return json(res, 200, e.t); /* as rspwalkd: the target, before its event */
        }
        if (sub === "/pause" && req.method === "POST") {
            if (e.t.state !== "running")
                return json(res, 409, { error: `target ${id} is ${e.t.state}` });
            setTimeout(() => setState(id, "stopped"), 50);
            return json(res, 200, e.t);
        }
    }
    if (p === "/v1/tree" && req.method === "GET") return json(res, 200, buildTree());
    /* no sampling here: the list is empty (the real server's runs are tested there) */
    if (p === "/v1/samples" && req.method === "GET") return json(res, 200, { samples: [] });
    if (p === "/mock/state" && req.method === "POST") {
        const d = JSON.parse(await readBody(req));
        return setState(d.id, d.state, d.error) ? json(res, 200, {}) : json(res, 404, {});
    }
    return json(res, 404, { error: `no such endpoint: ${req.method} ${p}` });
}

const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => json(res, 500, { error: String(e.message) }));
});
const colon = opts.listen.lastIndexOf(":");
server.listen(Number(opts.listen.slice(colon + 1)), opts.listen.slice(0, colon), () => {
    const a = server.address();
    process.stderr.write(`mock: listening on http://${a.address}:${a.port}/\n`);
});
setInterval(() => {
    for (const res of clients) res.write(": keep-alive\n\n");
}, 15000).unref();
process.on("SIGTERM", () => process.exit(0));
