// tests/dap/lldb-reference.js LLDB_VSCODE PORT PROG -- lldb's own adapter attached to the stub
// at 127.0.0.1:PORT (gdb-remote): every thread's frames as JSON on stdout,
// [{"id": TID, "frames": [{"name", "line"}]}].  A reference printed by dap.test.js beside
// rspwalk's frames, never a verdict; run with a deadline (lldb-vscode 14 can wait forever).
'use strict';
const { DebugClient } = require('@vscode/debugadapter-testsupport');

let done = false;
// The loop empties when lldb-vscode has gone away mid-request: say so, not exit 0.
process.on('beforeExit', () => {
    if (!done) {
        console.error('lldb-vscode went away before answering');
        process.exit(3);
    }
});

(async () => {
    const [lldb, port, prog] = process.argv.slice(2);
    // DebugClient spawns RUNTIME EXECUTABLE: env runs the adapter without arguments.
    const dc = new DebugClient('env', lldb, 'lldb-vscode');
    dc.defaultTimeout = 5000;
    await dc.start();
    await dc.initializeRequest({ adapterID: 'lldb-vscode', linesStartAt1: true, pathFormat: 'path' });
    // stopOnEntry: else lldb-vscode resumes the target once configured.
    await dc.attachRequest({ program: prog, stopOnEntry: true,
        attachCommands: [`gdb-remote 127.0.0.1:${port}`] });
    // It reports the stop again once configured; its frames are ready then.
    const stopped = dc.waitForEvent('stopped', 5000).catch(() => null);
    await dc.configurationDoneRequest().catch(() => null);
    await stopped;
    const out = [];
    for (const t of (await dc.threadsRequest()).body.threads) {
        const r = await dc.stackTraceRequest({ threadId: t.id }).then((x) => x.body, (e) => ({ error: e.message }));
        out.push({ id: t.id, error: r.error, frames: (r.stackFrames || []).map((f) => ({ name: f.name, line: f.line })) });
    }
    // Killed, not disconnected: lldb's detach would let the target run.
    dc._adapterProcess.kill('SIGKILL');
    // Exit once the pipe has it all: process.exit() may cut a pending write short.
    done = true;
    process.stdout.write(JSON.stringify(out), () => process.exit(0));
})().catch((e) => {
    console.error(e.message);
    process.exit(1);
});
