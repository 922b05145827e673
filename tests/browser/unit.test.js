/* tests/browser/unit.test.js -- the web page's pure helpers (server/web/lib.js)
 * under node's test runner: `node --test tests/browser/`.  No browser: the
 * DOM builders are exercised by the browser test (tests/browser/run). */
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const RW = require("../../server/web/lib.js");

function parse(chunks) {
    const got = [];
    const p = new RW.SseParser((e) => got.push(e));
    for (const c of chunks) p.feed(c);
    return { got, p };
}

test("sse: one event with its type and JSON data", () => {
    const { got } = parse(['event: target\ndata: {"id":1,"state":"stopped"}\n\n']);
    assert.deepEqual(got, [{ type: "target", data: '{"id":1,"state":"stopped"}', id: "" }]);
});

test("sse: an event split anywhere across chunks, even inside CRLF, comes out once", () => {
    const text = 'event: sample\r\ndata: {"id":2}\r\n\r\nevent: target\r\ndata: {}\r\n\r\n';
    for (let cut = 0; cut <= text.length; cut++) {
        const { got } = parse([text.slice(0, cut), text.slice(cut)]);
        assert.deepEqual(
            got.map((e) => e.type + " " + e.data),
            ['sample {"id":2}', "target {}"],
            "cut at " + cut
        );
    }
});

test("sse: lone CR ends a line too", () => {
    const { got } = parse(["data: a\r\rdata: b\r", "\r"]);
    assert.deepEqual(got.map((e) => e.data), ["a", "b"]);
});

test("sse: comments are skipped, data lines join with newlines, no type means message", () => {
    const { got } = parse([": keep-alive\n\ndata: one\ndata:two\n\n"]);
    assert.deepEqual(got, [{ type: "message", data: "one\ntwo", id: "" }]);
});

test("sse: an event without data is not dispatched and its type does not leak", () => {
    const { got } = parse(["event: target\n\ndata: x\n\n"]);
    assert.deepEqual(got, [{ type: "message", data: "x", id: "" }]);
});

test("sse: a leading BOM is dropped; id and retry are kept", () => {
    const { got, p } = parse(["\ufeffid: 7\nretry: 2500\ndata: x\n\n"]);
    assert.equal(got[0].id, "7");
    assert.equal(p.retryMs, 2500);
});

test("sse: an unfinished event stays pending", () => {
    const { got } = parse(["event: target\ndata: {}\n"]);
    assert.equal(got.length, 0);
});

const tree = {
    function: "/",
    count: 4,
    tasks: "[0-3]",
    children: [
        { function: "main", count: 1, children: [{ function: "a", count: 1, children: [] }] },
        {
            function: "clone3",
            count: 3,
            children: [{ function: null, count: 3, children: [] }],
        },
    ],
};

test("icicle: cells tile their parent left to right by count", () => {
    const { cells, depth } = RW.icicleLayout(tree, 0);
    assert.equal(depth, 3);
    const by = Object.fromEntries(cells.map((c) => [c.path.join(">"), c]));
    assert.deepEqual([by["/"].x, by["/"].w], [0, 1]);
    assert.deepEqual([by["/>main"].x, by["/>main"].w], [0, 0.25]);
    assert.deepEqual([by["/>clone3"].x, by["/>clone3"].w], [0.25, 0.75]);
    assert.deepEqual([by["/>clone3>??"].x, by["/>clone3>??"].depth], [0.25, 2]);
});

test("icicle: cells narrower than the minimum go with their subtrees", () => {
    const { cells } = RW.icicleLayout(tree, 0.3);
    assert.deepEqual(cells.map((c) => c.path.join(">")), ["/", "/>clone3", "/>clone3>??"]);
});

test("treeFind follows names from the root; treeSize counts nodes", () => {
    assert.equal(RW.treeFind(tree, ["/", "main", "a"]).function, "a");
    assert.equal(RW.treeFind(tree, ["/", "clone3", "??"]).count, 3);
    assert.equal(RW.treeFind(tree, ["/", "nope"]), null);
    assert.equal(RW.treeFind(tree, ["main"]), null);
    assert.equal(RW.treeSize(tree), 5);
});

test("frame text: label with offset, source in its accepted shapes, basename", () => {
    assert.equal(RW.frameLabel({ function: "c", offset: 8 }), "c+8");
    assert.equal(RW.frameLabel({ function: "main", offset: 0 }), "main");
    assert.equal(RW.frameLabel({ function: null, offset: null }), "??");
    assert.equal(RW.frameSource({ file: "/src/fixture.c", line: 315 }), "fixture.c:315");
    assert.equal(RW.frameSource({ source: { file: "a.c", line: 2 } }), "a.c:2");
    assert.equal(RW.frameSource({ source: "b.c:9" }), "b.c:9");
    assert.equal(RW.frameSource({ function: "x" }), null);
    assert.equal(RW.basename("/lib/x86_64-linux-gnu/libc.so.6"), "libc.so.6");
    assert.equal(RW.basename(null), null);
});

test("signal names follow GDB's numbering; none for 0 or a missing one", () => {
    assert.equal(RW.signalName(5), "SIGTRAP");
    assert.equal(RW.signalName(11), "SIGSEGV");
    assert.equal(RW.signalName(17), "SIGSTOP");
    assert.equal(RW.signalName(143), "signal 143");
    assert.equal(RW.signalName(0), null);
    assert.equal(RW.signalName(null), null);
});

test("speedscope links: the profile's absolute path whole-encoded, beside the page", () => {
    const href = RW.speedscopeHref("http://127.0.0.1:8080/#target=1",
        "v1/samples/3?format=speedscope", "sample 3: a&b=c");
    assert.equal(href, "/speedscope/index.html#profileURL=%2Fv1%2Fsamples%2F3%3Fformat%3Dspeedscope" +
        "&title=sample%203%3A%20a%26b%3Dc");
    /* as speedscope reads its hash: split at & and =, then decoded */
    const params = Object.fromEntries(href.split("#")[1].split("&").map((kv) => {
        const [k, v] = kv.split("=");
        return [k, decodeURIComponent(v)];
    }));
    assert.equal(params.profileURL, "/v1/samples/3?format=speedscope");
    assert.equal(params.title, "sample 3: a&b=c");
    assert.equal(RW.speedscopeHref("http://h/ui/index.html", "v1/tree?format=speedscope"),
        "/ui/speedscope/index.html#profileURL=%2Fui%2Fv1%2Ftree%3Fformat%3Dspeedscope");
});

test("a sample run's progress: by elapsed time, else by ticks; whole once it ended", () => {
    assert.equal(RW.runProgress({ state: "running", seconds: 2, elapsed: 0.5 }), 0.25);
    assert.equal(RW.runProgress({ state: "running", seconds: 2, hz: 10, ticks: 5 }), 0.25);
    assert.equal(RW.runProgress({ state: "running", seconds: 1, elapsed: 3 }), 1);
    assert.equal(RW.runProgress({ state: "running" }), 0);
    assert.equal(RW.runProgress({ state: "done", seconds: 2, elapsed: 0.1 }), 1);
});
