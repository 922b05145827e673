// tests/dap/dap.test.js -- `rspwalk --dap` driven by VS Code's DebugClient against real stubs.
//
// Each case starts a fixture under gdbserver or qemu-user (behind tests/tools/rsp_proxy.py,
// which keeps qemu's one connection so gdb sees the same stop after us), attaches through
// the adapter, continues to the fixture's breakpoint, reads every thread's stack (whole and
// in pages), scopes and variables, disconnects leaving the target stopped, then checks:
//   - frames and locals equal `rspwalk --locals -f json` on the same stop;
//   - the stacks equal gdb-multiarch's backtrace (tests/integration/oracle.py, compared by
//     tests/integration/compare.py), and the source lines gdb prints;
//   - with lldb-vscode-14 installed, lldb's adapter on the same stop is printed beside ours
//     (a reference, not a verdict).
// Run by tests/integration/run-dap.sh (reporter.mjs prints PASS/FAIL lines).  Env: RSPWALK
// (default build/release/rspwalk), DAP_TIMEOUT_MS (each request and event, default 30000).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const ROOT = path.resolve(__dirname, '../..');
const IT = path.join(ROOT, 'tests/integration');
const RSPWALK = process.env.RSPWALK || path.join(ROOT, 'build/release/rspwalk');
const TIMEOUT = Number(process.env.DAP_TIMEOUT_MS || 30000);
const FIX = (arch, name) => path.join(ROOT, 'build/fixtures', arch, name);
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'rspwalk-dap-'));
process.on('exit', () => fs.rmSync(TMP, { recursive: true, force: true }));

// ---- stubs ------------------------------------------------------------------------------

// Wait until LINE_RE matches a complete line of what STREAM prints; resolves the match.
function waitLine(child, stream, lineRe, what) {
    return new Promise((resolve, reject) => {
        let buf = '';
        const timer = setTimeout(() => reject(new Error(`${what} did not start: ${buf.trim()}`)),
            10000);
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

function kill(child, sig) {
    if (child && child.exitCode === null && child.signalCode === null) {
        try {
            child.kill(sig);
        } catch {}
    }
}

// gdbserver on a loopback port the kernel picks; the program stopped at its entry.
async function gdbserver(prog, args = []) {
    const gs = cp.spawn('gdbserver', ['127.0.0.1:0', prog, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    gs.stderr.on('data', (d) => (out += d.toString()));
    const m = await waitLine(gs, gs.stderr, /^Listening on port (\d+)$/, 'gdbserver');
    const pid = Number((out.match(/pid = (\d+)/) || [])[1]);
    return {
        port: Number(m[1]), pid, sysroot: '/', mainLwp: null,
        stop() {
            if (pid) try { process.kill(pid, 'SIGKILL'); } catch {}
            kill(gs, 'SIGTERM');
        },
    };
}

// qemu-ARCH with its gdbstub on a unix socket, rsp_proxy.py in front on a loopback port.
async function qemu(arch, prog, cpu, args = []) {
    const sysroot = { aarch64: '/usr/aarch64-linux-gnu' }[arch];
    const sock = path.join(TMP, `qemu-${process.hrtime.bigint()}.sock`);
    const q = cp.spawn(`qemu-${arch}`, [...(cpu ? ['-cpu', cpu] : []), '-L', sysroot, '-g', sock, prog,
        ...args], { stdio: 'ignore' });
    const proxy = cp.spawn('python3', [path.join(ROOT, 'tests/tools/rsp_proxy.py'), '--idle', '120',
        `unix:${sock}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    const m = await waitLine(proxy, proxy.stdout, /^(\d+)$/, 'rsp_proxy.py');
    return {
        port: Number(m[1]), sysroot, mainLwp: q.pid,
        stop() {
            kill(q, 'SIGKILL'); // qemu-user hands SIGTERM to the guest, which its stub holds
            setTimeout(() => kill(proxy, 'SIGTERM'), 500).unref();
        },
    };
}

// ---- the adapter --------------------------------------------------------------------------

async function adapter() {
    const dc = new DebugClient(RSPWALK, '--dap', 'rspwalk', { stdio: ['pipe', 'pipe', 'pipe'] });
    dc.defaultTimeout = TIMEOUT;
    await dc.start();
    const child = dc._adapterProcess;
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d.toString()));
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    return { dc, child, exited, stderr: () => stderr };
}

// initialize, attach, configurationDone (the "entry" stop), then continue to the next stop.
async function attachAndRun(dc, stub, prog) {
    const init = await dc.initializeRequest({ adapterID: 'rspwalk', linesStartAt1: true,
        columnsStartAt1: true, pathFormat: 'path' });
    assert.equal(init.body.supportsReadMemoryRequest, true);
    assert.equal(init.body.supportTerminateDebuggee, false);
    const initialized = dc.waitForEvent('initialized');
    await dc.attachRequest({ target: `127.0.0.1:${stub.port}`, exe: prog, sysroot: stub.sysroot });
    await initialized;
    const entry = dc.waitForEvent('stopped');
    await dc.configurationDoneRequest();
    const e = await entry;
    assert.equal(e.body.reason, 'entry');
    const continued = dc.waitForEvent('continued');
    const stopped = dc.waitForEvent('stopped');
    const c = await dc.continueRequest({ threadId: e.body.threadId });
    assert.equal(c.body.allThreadsContinued, true);
    await continued;
    return (await stopped).body;
}

// Every thread's frames (whole, and again in pages of 2), and each frame's variables.
async function collect(dc) {
    const threads = [];
    for (const t of (await dc.threadsRequest()).body.threads) {
        const lwp = Number((t.name.match(/^LWP (\d+)/) || [])[1]);
        const whole = (await dc.stackTraceRequest({ threadId: t.id })).body;
        assert.equal(whole.totalFrames, whole.stackFrames.length, `thread ${t.name}: totalFrames`);
        const paged = [];
        for (let start = 0; start < whole.totalFrames; start += 2) {
            const page = (await dc.stackTraceRequest({ threadId: t.id, startFrame: start, levels: 2 })).body;
            assert.equal(page.totalFrames, whole.totalFrames);
            paged.push(...page.stackFrames);
        }
        assert.deepEqual(paged, whole.stackFrames, `thread ${t.name}: pages differ from the whole stack`);
        const frames = [];
        for (const f of whole.stackFrames) {
            const vars = [];
            for (const s of (await dc.scopesRequest({ frameId: f.id })).body.scopes)
                for (const v of (await dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables)
                    vars.push({ name: v.name, value: v.value, ref: v.variablesReference });
            frames.push({ ...f, vars });
        }
        threads.push({ id: t.id, name: t.name, lwp, frames });
    }
    return threads;
}

async function disconnect(a) {
    await a.dc.disconnectRequest({});
    const code = await a.exited;
    assert.equal(code, 0, `rspwalk --dap exited ${code}: ${a.stderr()}`);
}

function run(cmd, args, env) {
    const r = cp.spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120000 });
    if (r.status !== 0)
        throw new Error(`${path.basename(cmd)} exited ${r.status}: ${(r.stderr || '').trim().split('\n').pop()}`);
    return r.stdout;
}

// ---- checks -------------------------------------------------------------------------------

// DAP's frames and variables against `rspwalk --locals -f json` of the same stop.  Returns
// that document with each frame's pc and name replaced by DAP's, for compare.py.
function checkAgainstCli(ours, doc) {
    assert.deepEqual(ours.map((t) => t.lwp).sort(), doc.threads.map((t) => t.lwp).sort(), 'thread LWPs');
    for (const t of doc.threads) {
        const d = ours.find((o) => o.lwp === t.lwp);
        assert.equal(d.frames.length, t.frames.length, `LWP ${t.lwp}: frame count`);
        t.frames.forEach((f, i) => {
            const g = d.frames[i], where = `LWP ${t.lwp} frame ${i}`;
            assert.equal(BigInt(g.instructionPointerReference), BigInt(f.pc), `${where}: pc`);
            const want = f.kind === 'signal' ? '<signal handler called>' : f.function ?? '??';
            assert.equal(g.name, want, `${where}: name`);
            assert.equal(g.presentationHint, f.kind === 'signal' ? 'label' : f.trust === 'scan' ? 'subtle' : 'normal',
                `${where}: presentationHint`);
            // Arguments then locals: the CLI's order.
            assert.deepEqual(g.vars.map((v) => [v.name, v.value]), (f.locals || []).map((v) => [v.name, v.value]),
                `${where} (${want}): variables`);
            for (const v of g.vars)
                assert.equal(v.ref !== 0, /^\{.*\S.*\}$/s.test(v.value), `${where}: ${v.name} expandable`);
            f.pc = g.instructionPointerReference;
            f.function = g.name === '??' || f.kind === 'signal' ? f.function : g.name;
        });
    }
    return doc;
}

// Source lines against gdb's (oracle.py's file and line), frame by frame where gdb has one.
function checkLines(ours, oracle) {
    let n = 0;
    for (const g of oracle.threads) {
        const d = ours.find((o) => o.lwp === g.lwp);
        g.frames.forEach((f, i) => {
            const o = d.frames[i];
            if (!o || f.line == null)
                return;
            assert.equal(o.source?.path, f.file, `LWP ${g.lwp} frame ${i} (${o.name}): source`);
            assert.equal(o.line, f.line, `LWP ${g.lwp} frame ${i} (${o.name}): line`);
            n++;
        });
    }
    assert.ok(n > 0, 'gdb printed no source line to compare with');
    return n;
}

// lldb's own adapter on the same stop, its frames beside ours (no verdict): lldb-reference.js
// in a process of its own with a deadline, since lldb-vscode may wait forever.
function lldbReference(stub, prog, ours) {
    const lldb = ['lldb-vscode-14', 'lldb-vscode'].find((c) => cp.spawnSync('which', [c]).status === 0);
    if (!lldb)
        return 'lldb-vscode-14 not installed (apt-get install lldb-14): no lldb reference';
    const r = cp.spawnSync(process.execPath, [path.join(__dirname, 'lldb-reference.js'), lldb,
        String(stub.port), prog], { encoding: 'utf8', timeout: 20000 });
    let theirs;
    try {
        theirs = JSON.parse(r.stdout);
    } catch {
        return `lldb reference: lldb-vscode gave no frames (${r.error ? r.error.message
            : (r.stderr || '').trim().split('\n').pop() || `exit ${r.status}`})`;
    }
    const lines = ['lldb reference (rspwalk | lldb-vscode):'];
    for (const mine of ours) {
        const t = theirs.find((x) => x.id === mine.lwp) || { frames: [] };
        lines.push(`  LWP ${mine.lwp}${t.error ? ` (lldb: ${t.error})` : ''}`);
        for (let i = 0; i < Math.max(mine.frames.length, t.frames.length); i++) {
            const a = mine.frames[i], b = t.frames[i];
            lines.push(`    ${String(i).padStart(2)} ${(a ? `${a.name}:${a.line}` : '').padEnd(36)} | ${b ? `${b.name}:${b.line}` : ''}`);
        }
    }
    return lines.join('\n');
}

// One fixture: the DAP session, then the CLI's and gdb's look at the same stop.
async function stackCase(t, stub, prog) {
    const a = await adapter();
    let ours, stop;
    try {
        stop = await attachAndRun(a.dc, stub, prog);
        assert.equal(stop.reason, 'breakpoint', `stopped: ${JSON.stringify(stop)}`);
        ours = await collect(a.dc);
        // readMemory of the code at the stop: every byte read or counted unreadable.
        const pc = ours.find((x) => x.id === stop.threadId).frames[0].instructionPointerReference;
        const mem = (await a.dc.customRequest('readMemory', { memoryReference: pc, count: 64 })).body;
        assert.equal(Buffer.from(mem.data, 'base64').length + mem.unreadableBytes, 64);
        await disconnect(a);
    } finally {
        kill(a.child, 'SIGKILL');
    }
    const dir = fs.mkdtempSync(path.join(TMP, 'case-'));
    const cli = JSON.parse(run(RSPWALK, ['--locals', '-f', 'json', '--sysroot', stub.sysroot, '--exe', prog,
        `127.0.0.1:${stub.port}`]));
    const doc = checkAgainstCli(ours, cli);
    const oracleText = run(path.join(IT, 'gdb_oracle.sh'), [`127.0.0.1:${stub.port}`, prog],
        { ORACLE_SYSROOT: stub.sysroot });
    fs.writeFileSync(path.join(dir, 'dap.json'), JSON.stringify(doc));
    fs.writeFileSync(path.join(dir, 'oracle.json'), oracleText);
    const args = [path.join(IT, 'compare.py'), '--exe', prog,
        ...(stub.mainLwp ? ['--main-lwp', String(stub.mainLwp)] : []),
        path.join(dir, 'dap.json'), path.join(dir, 'oracle.json')];
    const verdict = run('python3', args).trim();
    const nlines = checkLines(ours, JSON.parse(oracleText));
    t.diagnostic(`${verdict}; ${nlines} source lines as gdb's`);
    t.diagnostic(lldbReference(stub, prog, ours));
}

function stubCase(name, start, prog) {
    test(name, async (t) => {
        const stub = await start();
        try {
            await stackCase(t, stub, prog);
        } finally {
            stub.stop();
        }
    });
}

for (const f of ['threads-s0-O0-dyn', 'chain-s0-O0-dyn'])
    stubCase(`x86_64/${f}`, () => gdbserver(FIX('x86_64', f)), FIX('x86_64', f));
for (const f of ['threads-s0-O0-dyn', 'chain-s0-O0-dyn'])
    stubCase(`qemu-aarch64/${f}`, () => qemu('aarch64', FIX('aarch64', f), 'max,sve=off'), FIX('aarch64', f));

// Inline frames (tests/integration/locals_inline.c at -O2: lv_leaf and lv_mid inlined into
// lv_work): gdb's frames, and the lines of the calls for the functions code was inlined into.
// Built here with the fixtures' expectation section, so compare.py can read what it expects.
test('x86_64/inline-O2', async (t) => {
    const prog = path.join(TMP, 'inline-O2');
    const expect = path.join(TMP, 'expect.c');
    fs.writeFileSync(expect, '__attribute__((used, section(".rspwalk_expect"))) const char ' +
        'fixture_expect[] = "main: lv_leaf lv_mid lv_work main\\n";\n');
    run('gcc', ['-std=gnu11', '-Wall', '-Wextra', '-Werror', '-O2', '-g', '-o', prog,
        path.join(IT, 'locals_inline.c'), expect]);
    const stub = await gdbserver(prog);
    try {
        await stackCase(t, stub, prog);
    } finally {
        stub.stop();
    }
});

// pause and continue on a program that runs: events, a stack in the sleep, and disconnect
// while it runs leaves it running (detached).
test('x86_64/pause-continue', async () => {
    const stub = await gdbserver('/bin/sleep', ['60']);
    const a = await adapter();
    try {
        await a.dc.initializeRequest({ adapterID: 'rspwalk' });
        const initialized = a.dc.waitForEvent('initialized');
        await a.dc.attachRequest({ target: `127.0.0.1:${stub.port}` });
        await initialized;
        const entry = a.dc.waitForEvent('stopped');
        await a.dc.configurationDoneRequest();
        const tid = (await entry).body.threadId;
        await assert.rejects(a.dc.pauseRequest({ threadId: tid }).then(() => { throw new Error('no error'); }),
            /no error/, 'pause of a stopped target is answered without an error');
        for (let round = 0; round < 2; round++) {
            const continued = a.dc.waitForEvent('continued');
            await a.dc.continueRequest({ threadId: tid });
            await continued;
            await assert.rejects(a.dc.stackTraceRequest({ threadId: tid }), /running/);
            await new Promise((r) => setTimeout(r, 300));
            const stopped = a.dc.waitForEvent('stopped');
            await a.dc.pauseRequest({ threadId: tid });
            const s = (await stopped).body;
            assert.equal(s.reason, 'pause');
            const frames = (await a.dc.stackTraceRequest({ threadId: s.threadId })).body.stackFrames;
            assert.ok(frames.some((f) => /nanosleep/.test(f.name)), `no nanosleep in ${frames.map((f) => f.name)}`);
            assert.ok(frames.some((f) => f.name === 'main' || f.name === '__libc_start_main' ||
                /__libc_start_call_main/.test(f.name)), `no main in ${frames.map((f) => f.name)}`);
        }
        const continued = a.dc.waitForEvent('continued');
        await a.dc.continueRequest({ threadId: tid });
        await continued;
        await disconnect(a);
        // Detached and running: still alive, no longer traced.
        const status = fs.readFileSync(`/proc/${stub.pid}/status`, 'utf8');
        assert.match(status, /^TracerPid:\s+0$/m, 'the program is still traced after disconnect');
        assert.doesNotMatch(status, /^State:\s+t/m, 'the program is stopped after disconnect');
    } finally {
        kill(a.child, 'SIGKILL');
        stub.stop();
    }
});

// pause and continue under QEMU user mode, which reads no interrupt while its guest runs: the
// library stops it with a signal to one guest thread (its process is on this host), the one
// the stop names is walked, and the guest runs on after a continue.
test('qemu-aarch64/pause-continue', async () => {
    const prog = FIX('aarch64', 'shares-O0-dyn');
    const stub = await qemu('aarch64', prog, 'max,sve=off', ['1', '60']);
    const a = await adapter();
    try {
        await a.dc.initializeRequest({ adapterID: 'rspwalk' });
        const initialized = a.dc.waitForEvent('initialized');
        await a.dc.attachRequest({ target: `127.0.0.1:${stub.port}`, exe: prog, sysroot: stub.sysroot });
        await initialized;
        const entry = a.dc.waitForEvent('stopped');
        await a.dc.configurationDoneRequest();
        const tid = (await entry).body.threadId;
        for (let round = 0; round < 3; round++) {
            const continued = a.dc.waitForEvent('continued');
            await a.dc.continueRequest({ threadId: tid });
            await continued;
            await new Promise((r) => setTimeout(r, 300));
            const stopped = a.dc.waitForEvent('stopped');
            await a.dc.pauseRequest({ threadId: tid });
            const s = (await stopped).body;
            assert.equal(s.reason, 'pause');
            const frames = (await a.dc.stackTraceRequest({ threadId: s.threadId })).body.stackFrames;
            const names = frames.map((f) => f.name);
            // The busy worker (burn or share_* under worker) or main sleeping in its loop.
            assert.ok(names.includes('worker') || names.includes('main'),
                `round ${round}: neither worker nor main in ${names}`);
            assert.ok(names.length >= 2, `round ${round}: one frame only: ${names}`);
        }
        await disconnect(a);
    } finally {
        kill(a.child, 'SIGKILL');
        stub.stop();
    }
});

// The target exits: "exited" with its status, then "terminated"; requests then fail cleanly.
// The stop is raise(SIGTRAP) (s1): continuing from a breakpoint instruction compiled into
// the program (s0) would stop at it again, since rspwalk writes no registers to step past
// it as gdb does (docs/usage.md).
test('x86_64/exited', async () => {
    const prog = FIX('x86_64', 'chain-s1-O0-dyn');
    const stub = await gdbserver(prog);
    const a = await adapter();
    try {
        const stop = await attachAndRun(a.dc, stub, prog);
        const exited = a.dc.waitForEvent('exited');
        const terminated = a.dc.waitForEvent('terminated');
        await a.dc.continueRequest({ threadId: stop.threadId });
        assert.equal((await exited).body.exitCode, 0);
        await terminated;
        assert.deepEqual((await a.dc.threadsRequest()).body.threads, []);
        await assert.rejects(a.dc.continueRequest({ threadId: stop.threadId }), /exited/);
        await disconnect(a);
    } finally {
        kill(a.child, 'SIGKILL');
        stub.stop();
    }
});

// Malformed input: an error response each, never a crash; the end of input ends it cleanly.
test('malformed-messages', async () => {
    const child = cp.spawn(RSPWALK, ['--dap'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve(sig || code)));
    let buf = Buffer.alloc(0);
    const messages = [];
    child.stdout.on('data', (d) => {
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
        [frame('[1, 2]'), /not a JSON object/],
        [frame('{"seq": 2, "type": "event", "command": "threads"}'), /"type" is not "request"/],
        [frame('{"seq": 3, "type": "request"}'), /no "command"/],
        [frame('{"seq": 4, "type": "request", "command": "frobnicate"}'), /unknown or unsupported request 'frobnicate'/],
        [frame('{"seq": 5, "type": "request", "command": "threads", "arguments": 7}'), /"arguments" is not an object/],
        [frame('{"seq": 6, "type": "request", "command": "stackTrace", "arguments": {"threadId": "x"}}'), /threadId/],
        [frame('{"seq": 7, "type": "request", "command": "attach", "arguments": {"target": "|/bin/true"}}'), /./],
        [frame('{"seq": 8, "type": "request", "command": "evaluate", "arguments": {"expression": "1"}}'), /does not evaluate/],
        // Too large: refused, and its body skipped without losing step.
        [`Content-Length: 2000000\r\n\r\n${'x'.repeat(2000000)}`, /larger than/],
        ['Content-Length: twelve\r\n\r\n{}', /not a number/],
        ['Content-Type: x\r\n\r\n{}', /no Content-Length/],
        [frame('{"seq": 9, "type": "request", "command": "attach", "arguments": {"target": "127.0.0.1:1"}}'), /attach: /],
    ];
    for (const [input, re] of inputs) {
        const before = messages.length;
        child.stdin.write(input);
        const deadline = Date.now() + TIMEOUT;
        while (messages.length === before && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 10));
        const m = messages[before];
        assert.ok(m, `no response to ${JSON.stringify(input.slice(0, 60))}`);
        assert.equal(m.type, 'response');
        assert.equal(m.success, false, `${JSON.stringify(input.slice(0, 60))} succeeded`);
        assert.match(m.message, re);
        assert.doesNotMatch(m.message, /\n/);
    }
    child.stdin.end();
    assert.equal(await exited, 0, 'rspwalk --dap did not exit 0 at the end of input');
    const seqs = messages.map((m) => m.seq);
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'message seq numbers');
});
