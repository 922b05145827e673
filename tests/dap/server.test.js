// tests/dap/server.test.js -- `rspwalkd --dap-listen` driven by VS Code's DebugClient over TCP.
//
// rspwalkd serves a fixture under gdbserver as registered target 1 and DAP on a loopback
// port.  Cases:
//   - attach {"id": "1"}: the session borrows the target's link (gdbserver serves one
//     client); its stacks equal GET /v1/targets/1/stacks of the same stop, which answers
//     409 naming the session while it goes and 200 again after the disconnect;
//   - attach {"target": HOST:PORT} on a second gdbserver: the session's own link;
//   - a registered target that runs: stopped for the session, paused and continued in it,
//     running after a disconnect while it runs;
//   - attach to an unknown id, and malformed messages: an error response each, the
//     session going on; two sessions at once on the one listener.
// Run by tests/integration/run-server-doors.sh (reporter.mjs prints PASS/FAIL lines).
// Env: RSPWALKD (default build/release/rspwalkd), DAP_TIMEOUT_MS (default 30000).
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const cp = require('node:child_process');
const net = require('node:net');
const path = require('node:path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const ROOT = path.resolve(__dirname, '../..');
const RSPWALKD = process.env.RSPWALKD || path.join(ROOT, 'build/release/rspwalkd');
const TIMEOUT = Number(process.env.DAP_TIMEOUT_MS || 30000);
const PROG = path.join(ROOT, 'build/fixtures/x86_64/threads-s0-O0-dyn');
const CHAIN = path.join(ROOT, 'build/fixtures/x86_64/chain-s0-O0-dyn');

// Wait until LINE_RE matches a complete line of what STREAM prints; resolves the match.
function waitLine(child, stream, lineRe, what) {
    return new Promise((resolve, reject) => {
        let buf = '';
        const timer = setTimeout(() => reject(new Error(`${what} did not start: ${buf.trim()}`)), 10000);
        stream.on('data', (d) => {
            buf += d.toString();
            for (const line of buf.split('\n').slice(0, -1)) {
                const m = line.match(lineRe);
                if (m) {
                    clearTimeout(timer);
                    resolve(m);
                }
            }
        });
        child.on('exit', () => reject(new Error(`${what} exited: ${buf.trim()}`)));
    });
}

async function gdbserver(prog, args = []) {
    const gs = cp.spawn('gdbserver', ['127.0.0.1:0', prog, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    gs.stderr.on('data', (d) => (out += d.toString()));
    const m = await waitLine(gs, gs.stderr, /^Listening on port (\d+)$/, 'gdbserver');
    const pid = Number((out.match(/pid = (\d+)/) || [])[1]);
    return {
        port: Number(m[1]),
        stop() {
            if (pid) try { process.kill(pid, 'SIGKILL'); } catch {}
            try { gs.kill('SIGTERM'); } catch {}
        },
    };
}

let stub, server, http, dapPort, serverLog = '';

async function get(p) {
    const r = await fetch(`${http}${p}`);
    return { status: r.status, body: await r.json() };
}

async function waitState(id, want) {
    const deadline = Date.now() + TIMEOUT;
    let last;
    while (Date.now() < deadline) {
        last = (await get(`/v1/targets/${id}`)).body;
        if (last.state === want)
            return last;
        await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`target ${id} not ${want}: ${JSON.stringify(last)}`);
}

before(async () => {
    const dbg = (m) => process.env.SRV_DEBUG && console.error(m);
    stub = await gdbserver(PROG);
    dbg(`stub ${stub.port}`);
    server = cp.spawn(RSPWALKD, ['--db', ':memory:', '--listen', '127.0.0.1:0', '--dap-listen', '127.0.0.1:0',
        `127.0.0.1:${stub.port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    server.stderr.on('data', (d) => (serverLog += d.toString()));
    const h = waitLine(server, server.stderr, /^rspwalkd: listening on (http:\S+?)\/?$/, 'rspwalkd');
    const d = waitLine(server, server.stderr, /^rspwalkd: DAP on 127\.0\.0\.1:(\d+)$/, 'rspwalkd --dap-listen');
    http = (await h)[1];
    dapPort = Number((await d)[1]);
    dbg(`server ${http} dap ${dapPort}`);
    await waitState(1, 'stopped');
});

after(async () => {
    if (server && server.exitCode === null) {
        const exited = new Promise((r) => server.on('exit', (code) => r(code)));
        server.kill('SIGTERM');
        assert.equal(await exited, 0, `rspwalkd exited badly: ${serverLog}`);
    }
    if (stub)
        stub.stop();
});

async function client() {
    const dc = new DebugClient('unused', '', 'rspwalk');
    dc.defaultTimeout = TIMEOUT;
    await dc.start(dapPort);
    return dc;
}

// initialize, attach with ARGS, configurationDone (the "entry" stop).
async function attach(dc, args) {
    await dc.initializeRequest({ adapterID: 'rspwalk', linesStartAt1: true, columnsStartAt1: true,
        pathFormat: 'path' });
    const initialized = dc.waitForEvent('initialized');
    await dc.attachRequest(args);
    await initialized;
    const entry = dc.waitForEvent('stopped');
    await dc.configurationDoneRequest();
    return (await entry).body;
}

async function stacks(dc) {
    const out = {};
    for (const t of (await dc.threadsRequest()).body.threads) {
        const lwp = Number((t.name.match(/^LWP (\d+)/) || [])[1]);
        out[lwp] = (await dc.stackTraceRequest({ threadId: t.id })).body.stackFrames.map((f) =>
            BigInt(f.instructionPointerReference));
    }
    return out;
}

test('server/registered-target', async () => {
    const dc = await client();
    try {
        // The fixture runs to its breakpoint, through the session.
        const entry = await attach(dc, { id: '1', exe: PROG, sysroot: '/' });
        const stopped = dc.waitForEvent('stopped');
        await dc.continueRequest({ threadId: entry.threadId });
        assert.equal((await stopped).body.reason, 'breakpoint');
        const ours = await stacks(dc);
        assert.ok(Object.keys(ours).length >= 2, `threads: ${Object.keys(ours)}`);
        // The link is the session's meanwhile: walks are refused, naming it.
        const busy = await get('/v1/targets/1/stacks');
        assert.equal(busy.status, 409);
        assert.match(busy.body.error, /door session \(DAP session from 127\.0\.0\.1:\d+\)/);
        const again = await client();
        try {
            await again.initializeRequest({ adapterID: 'rspwalk' });
            await assert.rejects(again.attachRequest({ id: '1' }), /id '1'/);
        } finally {
            again.stopAdapter();
        }
        await dc.disconnectRequest({});
        // Found stopped, left stopped: the server's walk is of the session's stop.  The link
        // comes back when the session has closed it, just after the disconnect's answer.
        let doc;
        for (const deadline = Date.now() + TIMEOUT; Date.now() < deadline;) {
            doc = await get('/v1/targets/1/stacks');
            if (doc.status !== 409)
                break;
            await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal((await get('/v1/targets/1')).body.state, 'stopped');
        assert.equal(doc.status, 200, JSON.stringify(doc.body));
        for (const t of doc.body.threads) {
            assert.ok(ours[t.lwp], `LWP ${t.lwp} not in the session`);
            assert.deepEqual(t.frames.map((f) => BigInt(f.pc)), ours[t.lwp], `LWP ${t.lwp}: frames`);
        }
    } finally {
        dc.stopAdapter();
    }
});

test('server/target-in-attach', async () => {
    const other = await gdbserver(CHAIN);
    const dc = await client();
    try {
        const entry = await attach(dc, { target: `127.0.0.1:${other.port}`, exe: CHAIN, sysroot: '/' });
        const stopped = dc.waitForEvent('stopped');
        await dc.continueRequest({ threadId: entry.threadId });
        const s = (await stopped).body;
        const frames = (await dc.stackTraceRequest({ threadId: s.threadId })).body.stackFrames;
        assert.ok(frames.some((f) => f.name === 'main'), `no main in ${frames.map((f) => f.name)}`);
        // A target the session names is its own link: the registered one stays free.
        assert.equal((await get('/v1/targets/1/stacks')).status, 200);
        await dc.disconnectRequest({});
    } finally {
        dc.stopAdapter();
        other.stop();
    }
});

// A registered target that runs: stopped for the session, paused and continued through it,
// and running again after a disconnect while it runs (detached through the server's door).
test('server/registered-running-target', async () => {
    const sleeper = await gdbserver('/bin/sleep', ['600']);
    const dc = await client();
    try {
        let r = await fetch(`${http}/v1/targets`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ target: `127.0.0.1:${sleeper.port}` }) });
        const text = await r.text();
        assert.equal(r.status, 201, text);
        const id = JSON.parse(text).id;
        await waitState(id, 'stopped');
        r = await fetch(`${http}/v1/targets/${id}/resume`, { method: 'POST' });
        assert.equal(r.status, 200, await r.text());
        await waitState(id, 'running');
        const entry = await attach(dc, { id: String(id) });
        assert.equal((await get(`/v1/targets/${id}`)).body.state, 'stopped');
        const continued = dc.waitForEvent('continued');
        await dc.continueRequest({ threadId: entry.threadId });
        await continued;
        await new Promise((res) => setTimeout(res, 200));
        const stopped = dc.waitForEvent('stopped');
        await dc.pauseRequest({ threadId: entry.threadId });
        const s = (await stopped).body;
        assert.equal(s.reason, 'pause');
        const frames = (await dc.stackTraceRequest({ threadId: s.threadId })).body.stackFrames;
        assert.ok(frames.some((f) => /nanosleep/.test(f.name)), `no nanosleep in ${frames.map((f) => f.name)}`);
        const again = dc.waitForEvent('continued');
        await dc.continueRequest({ threadId: s.threadId });
        await again;
        await dc.disconnectRequest({});
        await waitState(id, 'running');
        let doc;
        for (const deadline = Date.now() + TIMEOUT; Date.now() < deadline;) {
            doc = await get(`/v1/targets/${id}/stacks`);
            if (doc.status !== 409)
                break;
            await new Promise((res) => setTimeout(res, 50));
        }
        assert.equal(doc.status, 200, JSON.stringify(doc.body));
        assert.equal((await get(`/v1/targets/${id}`)).body.state, 'running', 'the walk left it stopped');
    } finally {
        dc.stopAdapter();
        sleeper.stop();
    }
});

test('server/bad-attach-and-malformed', async () => {
    const sock = net.createConnection(dapPort, '127.0.0.1');
    await new Promise((r, j) => sock.once('connect', r).once('error', j));
    let buf = Buffer.alloc(0);
    const messages = [];
    sock.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        for (;;) {
            const h = buf.indexOf('\r\n\r\n');
            if (h < 0) break;
            const n = Number(/Content-Length: (\d+)/.exec(buf.subarray(0, h).toString())[1]);
            if (buf.length < h + 4 + n) break;
            messages.push(JSON.parse(buf.subarray(h + 4, h + 4 + n).toString()));
            buf = buf.subarray(h + 4 + n);
        }
    });
    const frame = (s) => `Content-Length: ${Buffer.byteLength(s)}\r\n\r\n${s}`;
    const inputs = [
        [frame('{"seq": 1, "type": "request", "command": '), /not JSON/],
        [frame('{"seq": 2, "type": "request", "command": "attach", "arguments": {"id": "99"}}'), /id '99'/],
        [frame('{"seq": 3, "type": "request", "command": "attach", "arguments": {"id": "x"}}'), /id 'x'/],
        [frame('{"seq": 4, "type": "request", "command": "attach", "arguments": {"target": "|/bin/true"}}'),
            /not allowed here/],
        ['Content-Length: twelve\r\n\r\n{}', /not a number/],
    ];
    try {
        for (const [input, re] of inputs) {
            const n = messages.length;
            sock.write(input);
            const deadline = Date.now() + TIMEOUT;
            while (messages.length === n && Date.now() < deadline)
                await new Promise((r) => setTimeout(r, 10));
            const m = messages[n];
            assert.ok(m, `no response to ${JSON.stringify(input.slice(0, 60))}`);
            assert.equal(m.success, false);
            assert.match(m.message, re);
        }
    } finally {
        sock.destroy();
    }
    // The server still serves, and the target's link is free.
    assert.equal((await get('/v1/targets/1/stacks')).status, 200);
    assert.match(serverLog, /attach id 99: no target 99/);
});
