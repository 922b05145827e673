// tests/dap/reporter.mjs -- node:test results as the integration tests' lines:
// "PASS dap/NAME (N ms)" or "FAIL dap/NAME: why" with details indented, then the test's
// diagnostics (t.diagnostic: its verdicts, the lldb reference) indented under its line.
export default async function* reporter(source) {
    for await (const ev of source) {
        const d = ev.data;
        if (ev.type === 'test:diagnostic') {
            // A test's own come after its result line, at its nesting; node's summary
            // ("tests 7", "pass 7", ...) at the end.
            if (!/^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \d/.test(d.message))
                for (const line of String(d.message).split('\n'))
                    yield `    ${line}\n`;
            continue;
        }
        if ((ev.type !== 'test:pass' && ev.type !== 'test:fail') || d.nesting !== 0 || d.skip)
            continue;
        const ms = Math.round(d.details?.duration_ms ?? 0);
        if (ev.type === 'test:pass') {
            yield `PASS dap/${d.name} (${ms} ms)\n`;
        } else {
            const err = d.details?.error;
            const cause = err?.cause ?? err;
            const msg = String(cause?.message ?? cause ?? 'failed').split('\n');
            yield `FAIL dap/${d.name}: ${msg[0]}\n`;
            for (const line of msg.slice(1, 40))
                yield `    ${line}\n`;
        }
    }
}
