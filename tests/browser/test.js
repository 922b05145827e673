/* tests/browser/test.js -- drives rspwalkd's web page in Debian's chromium
 * (headless, through playwright-core) and checks what a person would see.
 * Run by tests/browser/run, which starts the servers and stubs; prints one
 * line per check, "PASS name (N ms)" or "FAIL name: why", and exits non-zero
 * if any failed.
 *
 * Usage: test.js --url URL (--expect FILE | --mock) [--kill-pid PID]
 *                [--screenshot PNG] [--target-name NAME] [--token-url URL --token TOKEN]
 *                [--sample-target HOST:PORT]
 *   --expect      a stack document (docs/json.md) of the target, from `rspwalk
 *                 -f json` on the same stop: the page must show its functions
 *                 (with --mock: the mock's own document of its target "threads")
 *   --kill-pid    the target's stub: killed to see the page follow the event
 *   --mock        the server is tests/browser/mock-server.js: the checks that
 *                 need its hostile names, its running target and /mock/state
 *   --token-url   a second server that asks for TOKEN: the token form
 *   --sample-target  HOST:PORT of a stub whose program is busy in share_70,
 *                 share_20, share_10: added, sampled from the page, its flame
 *                 graph checked in the icicle and in speedscope (screenshots
 *                 web-flame.png and web-speedscope.png beside --screenshot)
 */
"use strict";

const fs = require("fs");
const path = require("path");

function parseArgs(argv) {
    const o = { chromium: process.env.CHROMIUM || "/usr/bin/chromium", mock: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => {
            if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
            return argv[++i];
        };
        if (a === "--url") o.url = next();
        else if (a === "--expect") o.expect = next();
        else if (a === "--kill-pid") o.killPid = Number(next());
        else if (a === "--screenshot") o.screenshot = next();
        else if (a === "--target-name") o.targetName = next();
        else if (a === "--mock") o.mock = true;
        else if (a === "--token-url") o.tokenUrl = next();
        else if (a === "--token") o.token = next();
        else if (a === "--sample-target") o.sampleTarget = next();
        else if (a === "--chromium") o.chromium = next();
        else throw new Error(`unknown argument ${a}`);
    }
    if (!o.url || !(o.expect || o.mock)) throw new Error("--url and --expect are required");
    return o;
}

const WAIT_MS = 20000;
let failed = 0;
let passed = 0;

/* One check: PASS or FAIL line; returns whether it passed. */
async function check(name, fn) {
    const t0 = Date.now();
    try {
        await fn();
        passed++;
        console.log(`PASS ${name} (${Date.now() - t0} ms)`);
        return true;
    } catch (e) {
        failed++;
        const msg = String((e && e.message) || e).split("\n");
        console.log(`FAIL ${name}: ${msg[0]}`);
        for (const l of msg.slice(1, 30)) console.log("    " + l);
        return false;
    }
}

function assert(cond, why) {
    if (!cond) throw new Error(why);
}

function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
}

/* The functions of each thread of a stack document, as the page names them. */
function docThreads(doc) {
    return (doc.threads || []).map((t) => ({
        id: String(t.id),
        functions: (t.frames || []).map((f) => (f.function === null ? "" : String(f.function))),
    }));
}

/* The merged tree's first level for a stack document: outermost callers and
 * how many threads start there.  render.h names a frame without a function
 * "MODULE+0xOFFSET", which the document cannot tell (no load addresses):
 * those are "?" here, and tree nodes not named by a function match them. */
function docTopLevel(doc) {
    const counts = new Map();
    for (const t of doc.threads || []) {
        const frames = t.frames || [];
        if (frames.length === 0) continue;
        const f = frames[frames.length - 1];
        const name = f.function === null ? "?" : f.function;
        counts.set(name, (counts.get(name) || 0) + 1);
    }
    return Array.from(counts, ([name, count]) => ({ name, count })).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    );
}

async function pageThreads(page) {
    return page.$$eval("#stacks .thread", (els) =>
        els.map((el) => ({
            id: el.dataset.threadId,
            functions: Array.from(el.querySelectorAll("tr.frame"), (tr) => tr.dataset.function),
        }))
    );
}

async function targetState(page, name) {
    return page.evaluate((name) => {
        for (const li of document.querySelectorAll("#targets li[data-target-id]")) {
            const n = li.querySelector(".target-name").textContent;
            if (n === name) return li.dataset.state;
        }
        return null;
    }, name);
}

async function waitState(page, name, states, why) {
    try {
        await page.waitForFunction(
            ([name, states]) => {
                for (const li of document.querySelectorAll("#targets li[data-target-id]")) {
                    if (li.querySelector(".target-name").textContent === name)
                        return states.includes(li.dataset.state);
                }
                return false;
            },
            [name, states],
            { timeout: WAIT_MS }
        );
    } catch (e) {
        const now = await targetState(page, name);
        throw new Error(`${why}: target "${name}" is ${now === null ? "not listed" : now}, ` +
            `not ${states.join(" or ")}, after ${WAIT_MS / 1000} s`);
    }
}

async function selectTarget(page, name) {
    const btn = page.locator("#targets .target-btn", {
        has: page.locator(".target-name", { hasText: name }),
    });
    await btn.first().click();
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const expect = o.expect
        ? JSON.parse(fs.readFileSync(o.expect, "utf8"))
        : await mockExpect(o.url);
    const name = o.targetName || (o.mock ? "threads" : null);
    let pw;
    try {
        pw = require("playwright-core");
    } catch (e) {
        console.log("FAIL setup: playwright-core is not installed (npm ci in tests/browser)");
        process.exit(1);
    }
    const browser = await pw.chromium.launch({
        executablePath: o.chromium,
        headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems = [];
    const urls = [];
    page.on("console", (m) => {
        if (m.type() === "error" || m.type() === "warning")
            problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("request", (r) => urls.push(r.url()));
    let stacksDoc = null;
    page.on("response", async (r) => {
        if (/\/v1\/targets\/[^/]+\/stacks/.test(r.url()) && r.ok()) {
            try {
                stacksDoc = await r.json();
            } catch (e) {
                problems.push(`stacks answer is not JSON: ${r.url()}`);
            }
        }
    });

    let targetName = name;
    const loaded = await check("page loads and the events stream is live", async () => {
        const res = await page.goto(o.url, { waitUntil: "load" });
        assert(res && res.ok(), `GET ${o.url}: HTTP ${res && res.status()}`);
        assert((await page.title()) === "rspwalkd", `title is "${await page.title()}"`);
        await page.waitForSelector('#live[data-state="live"]', { timeout: WAIT_MS }).catch(() => {
            throw new Error("the live indicator never said live (GET /v1/events)");
        });
    });
    if (!loaded) return finish(browser, problems, page, o);

    await check("the target is listed with state stopped", async () => {
        await page.waitForSelector("#targets li[data-target-id]", { timeout: WAIT_MS });
        if (!targetName) {
            const names = await page.$$eval("#targets .target-name", (els) =>
                els.map((e) => e.textContent));
            assert(names.length === 1, `expected one target, the page lists ${names.length}`);
            targetName = names[0];
        }
        await waitState(page, targetName, ["stopped"], "waiting for the stub's stop");
    });

    const want = docThreads(expect);
    await check("every thread is shown with the functions rspwalk -f json names", async () => {
        await selectTarget(page, targetName);
        try {
            await page.waitForFunction(
                (n) => document.querySelectorAll("#stacks .thread").length === n &&
                    document.querySelector("#stacks").getAttribute("aria-busy") === "false",
                want.length,
                { timeout: WAIT_MS }
            );
        } catch (e) {
            const got = await page.$$eval("#stacks .thread", (els) => els.length);
            const err = await page.textContent("#stacks-error");
            throw new Error(`${got} threads on the page, ${want.length} in the CLI's walk` +
                (err ? `; the page says: ${err}` : ""));
        }
        const got = await pageThreads(page);
        const diffs = [];
        for (let i = 0; i < want.length; i++) {
            if (!same(got[i], want[i]))
                diffs.push(`thread ${i}: page ${JSON.stringify(got[i])}\n` +
                    `          cli  ${JSON.stringify(want[i])}`);
        }
        assert(diffs.length === 0, `${diffs.length} threads differ\n${diffs.join("\n")}`);
    });

    await check("the page shows exactly the API's stack document", async () => {
        assert(stacksDoc, "no answer from GET /v1/targets/ID/stacks was seen");
        const got = await pageThreads(page);
        assert(same(got, docThreads(stacksDoc)),
            `page ${JSON.stringify(got)}\napi  ${JSON.stringify(docThreads(stacksDoc))}`);
        const pcs = await page.$$eval("#stacks tr.frame .pc", (els) => els.map((e) => e.textContent));
        const apiPcs = stacksDoc.threads.flatMap((t) => t.frames.map((f) => f.pc));
        assert(same(pcs, apiPcs), "the pcs differ from the API's");
    });

    /* In mock mode the tree merges every canned target; otherwise only ours. */
    const wantTasks = o.mock ? null : expect.threads.length;
    const wantTop = o.mock ? null : docTopLevel(expect);
    /* The main thread's call path, outermost first: the walk may go on past
     * main (__libc_start_main, _start), so main need not be a top node. */
    const mainThread = (expect.threads || []).find((t) =>
        (t.frames || []).some((f) => f.function === "main")) || { frames: [] };
    const mainPath = mainThread.frames.slice().reverse().map((f) =>
        f.function === null ? "?" : f.function);
    await check("the merged tree has main's path from the top, with the right task count", async () => {
        await page.waitForSelector('#tree li[data-function="/"]', { timeout: WAIT_MS })
            .catch(async () => {
                throw new Error("no tree drawn; the page says: " +
                    ((await page.textContent("#tree-error")) || (await page.textContent("#tree"))));
            });
        const root = await page.$eval('#tree li[data-function="/"]', (li, path) => {
            const kids = (el) => Array.from(el.querySelectorAll(":scope > details > ul > li"));
            const along = [];
            let node = li;
            for (const name of path) {
                node = kids(node).find((c) => c.dataset.function === name ||
                    (name === "?" && /\+0x[0-9a-f]+$/.test(c.dataset.function)));
                if (!node) break;
                along.push({ name, count: Number(node.dataset.count) });
            }
            return {
                count: Number(li.dataset.count),
                top: kids(li).map((c) => ({ name: c.dataset.function, count: Number(c.dataset.count) })),
                along,
                summary: document.querySelector("#tree-summary").textContent,
            };
        }, mainPath);
        const fnNames = new Set(wantTop ? wantTop.map((n) => n.name) : []);
        const unnamed = root.top.filter((n) => !fnNames.has(n.name) && /\+0x[0-9a-f]+$/.test(n.name));
        if (unnamed.length > 0) {
            root.top = root.top.filter((n) => !unnamed.includes(n));
            root.top.push({ name: "?", count: unnamed.reduce((a, n) => a + n.count, 0) });
        }
        root.top.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        assert(mainPath.length > 0, "the expected walk has no thread in main");
        assert(root.along.length === mainPath.length,
            `main's path stops after ${JSON.stringify(root.along.map((n) => n.name))}; ` +
            `want ${JSON.stringify(mainPath)}`);
        const main = root.along.find((n) => n.name === "main");
        if (wantTasks !== null) {
            assert(root.count === wantTasks, `root counts ${root.count} tasks, want ${wantTasks}`);
            assert(root.summary.startsWith(wantTasks + " task"),
                `summary says "${root.summary}", want ${wantTasks} tasks`);
            assert(same(root.top, wantTop),
                `top nodes ${JSON.stringify(root.top)}, want ${JSON.stringify(wantTop)}`);
            assert(main.count === 1, `main counts ${main.count} tasks, want 1 (the main thread)`);
        }
    });

    await check("the icicle view draws the tree and zooms with the keyboard", async () => {
        await page.click("#view-icicle");
        const cells = await page.$$eval("#icicle-cells .cell", (els) => els.map((e) => e.dataset.function));
        assert(cells.length > 3 && cells[0] === "/" && cells.includes("main"),
            `cells: ${JSON.stringify(cells.slice(0, 10))}`);
        await page.focus('#icicle-cells .cell[data-function="main"]');
        await page.keyboard.press("Enter");
        const zoomed = await page.$$eval("#icicle-cells .cell", (els) => els.map((e) => e.dataset.function));
        assert(zoomed[0] === "main" && !zoomed.includes("/"),
            `after Enter on main the cells are ${JSON.stringify(zoomed.slice(0, 6))}`);
        await page.click("#icicle-reset");
        await page.click("#view-tree");
        assert(await page.isVisible('#tree li[data-function="/"]'), "the tree did not come back");
    });

    await check("a target can be added and removed", async () => {
        await page.click("#add-target > summary");
        await page.fill('#add-form input[name="target"]', "127.0.0.1:1");
        await page.fill('#add-form input[name="name"]', "unreachable <i>x</i>");
        await page.click('#add-form button[type="submit"]');
        await page.waitForSelector("#targets li.selected .target-name >> text=unreachable <i>x</i>",
            { timeout: WAIT_MS }).catch(async () => {
            throw new Error("the new target was not listed and selected; the form says: " +
                (await page.textContent("#add-error")));
        });
        assert((await page.$$("#targets i")).length === 0, "the name was parsed as HTML");
        await page.click("#btn-remove");
        await page.click("#btn-remove");
        await page.waitForFunction(() => !Array.from(document.querySelectorAll("#targets .target-name"))
            .some((e) => e.textContent.startsWith("unreachable")), null, { timeout: WAIT_MS })
            .catch(async () => {
                throw new Error("still listed after Remove; the page says: " +
                    (await page.textContent("#stacks-error")));
            });
        await page.click("#add-target > summary");
    });

    if (o.mock) await mockChecks(page, o);

    await check("screenshot at 1280x800", async () => {
        await selectTarget(page, targetName);
        await page.waitForFunction(
            (n) => document.querySelectorAll("#stacks .thread").length === n &&
                document.querySelector("#stacks").getAttribute("aria-busy") === "false",
            want.length, { timeout: WAIT_MS });
        await page.waitForSelector('#tree li[data-function="/"]', { timeout: WAIT_MS });
        await page.evaluate(() => document.activeElement && document.activeElement.blur());
        if (o.screenshot) {
            fs.mkdirSync(path.dirname(o.screenshot), { recursive: true });
            await page.screenshot({ path: o.screenshot });
        }
    });

    if (o.sampleTarget) await sampleChecks(context, page, o, targetName);

    await check("a dead stub's event reaches the page without a reload", async () => {
        await page.evaluate(() => (window.__noReload = true));
        if (o.mock) {
            const id = await page.$eval("#targets li.selected", (li) => li.dataset.targetId);
            const r = await fetch(new URL("mock/state", o.url), {
                method: "POST",
                body: JSON.stringify({ id: Number(id), state: "link-lost", error: "stub gone" }),
            });
            assert(r.ok, "POST /mock/state failed");
        } else {
            assert(o.killPid > 0, "no --kill-pid given");
            process.kill(o.killPid, "SIGKILL");
        }
        await waitState(page, targetName, ["link-lost"], "after killing the stub");
        assert(await page.evaluate(() => window.__noReload === true), "the page was reloaded");
        const badge = await page.textContent("#stacks-state");
        assert(badge === "link-lost", `the stacks pane's badge says "${badge}"`);
    });

    if (o.tokenUrl) await tokenChecks(context, o);

    await check("no token in any URL", async () => {
        const bad = urls.filter((u) => o.token && u.includes(o.token));
        assert(bad.length === 0, `requests carrying the token: ${bad.join(" ")}`);
    });
    return finish(browser, problems, page, o);
}

/* A sample run started from the page on the program at o.sampleTarget
 * (busy 70/20/10 in share_70/20/10): progress, the finished run, its
 * flame graph in the icicle and in speedscope.  Leaves TARGETNAME selected
 * and the live tree shown, as the checks after it expect. */
async function sampleChecks(context, page, o, targetName) {
    const name = "shares";
    const shot = (what) => o.screenshot && o.screenshot.replace(/[^/]*\.png$/, `web-${what}.png`);
    let runId = null;
    const ok = await check("a sample run started from the page shows its progress and ends done", async () => {
        const r = await fetch(new URL("v1/targets", o.url), {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ target: o.sampleTarget, name }),
        });
        assert(r.ok, `POST /v1/targets ${o.sampleTarget}: HTTP ${r.status} ${await r.text()}`);
        await waitState(page, name, ["stopped", "running"], "the sampled program");
        await selectTarget(page, name);
        await page.waitForSelector("#sample-form:not([hidden]) button:not([disabled])",
            { timeout: WAIT_MS }).catch(() => {
            throw new Error("no Sample button for the selected target");
        });
        await page.fill('#sample-form input[name="hz"]', "50");
        await page.fill('#sample-form input[name="seconds"]', "2");
        await page.click('#sample-form button[type="submit"]');
        const running = await page.waitForSelector('#runs li.run[data-state="running"] progress',
            { timeout: WAIT_MS }).catch(async () => {
            throw new Error("no running run with a progress bar; the page says: " +
                (await page.textContent("#sample-error")) + (await page.textContent("#runs")));
        });
        runId = await running.evaluate((el) => el.closest("li").dataset.runId);
        await page.waitForFunction(() => /tick/.test(document.getElementById("sample-status").textContent),
            null, { timeout: WAIT_MS }).catch(() => {
            throw new Error("the header never showed the run's ticks from its events");
        });
        await page.waitForSelector(`#runs li.run[data-run-id="${runId}"][data-state="done"]`,
            { timeout: WAIT_MS }).catch(async () => {
            throw new Error(`run ${runId} did not end done: ` + (await page.textContent("#runs")));
        });
        const facts = await page.textContent(`#runs li.run[data-run-id="${runId}"] .run-facts`);
        const ticks = Number((/([0-9]+) ticks?/.exec(facts) || [])[1]);
        assert(ticks >= 20, `run ${runId} lists "${facts}": want about 100 ticks`);
    });
    if (!ok) return;

    // About 100 samples: share_70 against the other two together is many standard deviations
    // apart; share_20 against share_10 is two, which a test must not bet on.
    await check("the run's flame graph: the icicle has share_70 wider than share_20 and share_10 together", async () => {
        await page.click(`#runs li.run[data-run-id="${runId}"] .run-flame`);
        await page.waitForSelector('#icicle-cells .cell[data-function="share_70"]', { timeout: WAIT_MS })
            .catch(async () => {
                throw new Error("no share_70 cell; the tree pane says: " +
                    (await page.textContent("#tree-error")));
            });
        const counts = await page.$$eval("#icicle-cells .cell", (els) => {
            const c = {};
            for (const e of els) c[e.dataset.function] = (c[e.dataset.function] || 0) + Number(e.dataset.count);
            return c;
        });
        assert(counts.share_70 > (counts.share_20 || 0) + (counts.share_10 || 0) && counts.share_20 > 0 &&
            counts.share_10 > 0,
            `counts ${JSON.stringify({ s70: counts.share_70, s20: counts.share_20, s10: counts.share_10 })}`);
        const src = await page.textContent("#tree-source-text");
        assert(src.includes("#" + runId), `the tree pane says it shows "${src}"`);
        await page.evaluate(() => document.activeElement && document.activeElement.blur());
        if (shot("flame")) await page.screenshot({ path: shot("flame") });
    });

    await check("speedscope opens the run's profile and the live tree with no console errors", async () => {
        const href = await page.getAttribute(`#runs li.run[data-run-id="${runId}"] a.run-speedscope`, "href");
        assert(href, "no speedscope link for the run");
        const ss = await context.newPage();
        const errs = [];
        ss.on("console", (m) => { if (m.type() === "error") errs.push(m.text()); });
        ss.on("pageerror", (e) => errs.push(e.message));
        const profile = ss.waitForResponse((r) => /\/v1\/samples\/[0-9]+\?format=speedscope$/.test(r.url()),
            { timeout: WAIT_MS });
        await ss.goto(new URL(href, o.url).href, { waitUntil: "load" });
        const res = await profile;
        assert(res.ok(), `speedscope's fetch of ${res.url()}: HTTP ${res.status()}`);
        /* speedscope names the tab after the loaded profile */
        await ss.waitForFunction(() => /rspwalkd sample/.test(document.title), null, { timeout: WAIT_MS })
            .catch(async () => {
                throw new Error(`speedscope's title is "${await ss.title()}": the profile did not load`);
            });
        await ss.waitForSelector("canvas", { timeout: WAIT_MS });
        await ss.waitForTimeout(300);
        if (shot("speedscope")) await ss.screenshot({ path: shot("speedscope") });
        /* and the live merged tree, from the tree pane's link */
        const treeHref = await page.getAttribute("#tree-speedscope", "href");
        const tree = ss.waitForResponse((r) => /\/v1\/tree\?format=speedscope$/.test(r.url()),
            { timeout: WAIT_MS });
        await ss.goto(new URL(treeHref, o.url).href, { waitUntil: "load" });
        await ss.reload({ waitUntil: "load" }); /* a new hash alone does not reload speedscope */
        const treeRes = await tree;
        assert(treeRes.ok(), `speedscope's fetch of ${treeRes.url()}: HTTP ${treeRes.status()}`);
        await ss.waitForFunction(() => /current stacks/.test(document.title), null, { timeout: WAIT_MS })
            .catch(async () => {
                throw new Error(`speedscope's title is "${await ss.title()}": the tree did not load`);
            });
        await ss.close();
        assert(errs.length === 0, `speedscope's console: ${errs.join(" | ")}`);
    });

    await check("back to the live tree; the sampled program removed", async () => {
        await page.click("#tree-live");
        await page.click("#view-tree");
        const id = await page.$eval("#targets li.selected", (li) => li.dataset.targetId);
        const r = await fetch(new URL("v1/targets/" + id, o.url), { method: "DELETE" });
        assert(r.ok, `DELETE /v1/targets/${id}: HTTP ${r.status}`);
        await selectTarget(page, targetName);
        await page.waitForSelector('#tree li[data-function="/"]', { timeout: WAIT_MS });
    });
}

/* The mock's document of its target "threads", which the page must show. */
async function mockExpect(url) {
    const list = (await (await fetch(new URL("v1/targets", url))).json()).targets;
    const t = list.find((x) => x.name === "threads");
    if (!t) throw new Error("the mock has no target named threads");
    return (await fetch(new URL(`v1/targets/${t.id}/stacks`, url))).json();
}

/* The mock's extras: names that try to be HTML, and pause/resume. */
async function mockChecks(page) {
    await check("names from the server are text, never HTML", async () => {
        await selectTarget(page, "<b>hostile</b> names");
        await page.waitForSelector("#stacks .thread", { timeout: WAIT_MS });
        const n = await page.$$eval("#stacks img, #tree img, #targets b, #stacks b", (els) => els.length);
        assert(n === 0, `${n} elements made from server strings`);
        const first = await page.$eval("#stacks tr.frame .fname", (e) => e.textContent);
        assert(first === '<img src=x onerror="window.__pwned=1">', `first frame shows ${first}`);
        assert(await page.evaluate(() => window.__pwned === undefined), "a handler ran");
    });

    await check("pause and resume follow the target's events", async () => {
        await selectTarget(page, "worker");
        await page.waitForSelector("#btn-pause:not([disabled])", { timeout: WAIT_MS });
        assert(await page.isDisabled("#btn-resume"), "Resume is enabled on a running target");
        await page.click("#btn-pause");
        await waitState(page, "worker", ["stopped"], "after Pause");
        await page.waitForSelector("#stacks .thread", { timeout: WAIT_MS });
        await page.click("#btn-resume");
        await waitState(page, "worker", ["running"], "after Resume");
        await page.waitForSelector("#stacks.stale", { timeout: WAIT_MS });
    });
}

/* A server that asks for a token: the form appears, the token is kept for
 * the session and sent only in the Authorization header. */
async function tokenChecks(context, o) {
    const page = await context.newPage();
    const problems = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await check("a 401 asks for the token, which unlocks the page and is kept", async () => {
        await page.goto(o.tokenUrl);
        await page.waitForSelector("#token-form:not([hidden])", { timeout: WAIT_MS });
        assert((await page.$$("#targets li")).length === 0, "targets shown without a token");
        await page.fill("#token-input", o.token);
        await page.press("#token-input", "Enter");
        await page.waitForSelector("#targets li[data-target-id]", { timeout: WAIT_MS });
        await page.waitForSelector('#live[data-state="live"]', { timeout: WAIT_MS });
        assert(await page.isHidden("#token-form"), "the form stayed");
        await page.reload();
        await page.waitForSelector("#targets li[data-target-id]", { timeout: WAIT_MS });
        assert(await page.isHidden("#token-form"), "the token was not kept for the session");
        /* speedscope fetches without the token: behind one the page offers no link to it */
        assert(await page.isHidden("#tree-speedscope"), "a speedscope link behind a token");
        assert(problems.length === 0, problems.join("; "));
    });
    await page.close();
}

/* The last check; a failed run also leaves the page as it ended, beside
 * the screenshot (NAME-failed.png). */
async function finish(browser, problems, page, o) {
    await check("no console errors or page errors", async () => {
        assert(problems.length === 0, `${problems.length}:\n${problems.join("\n")}`);
    });
    if (failed > 0 && o.screenshot) {
        const png = o.screenshot.replace(/\.png$/, "") + "-failed.png";
        await page.screenshot({ path: png }).then(() => console.log(`    (the page at the end: ${png})`),
            () => {});
    }
    await browser.close();
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
}

main().catch((e) => {
    console.log(`FAIL setup: ${e.message.split("\n")[0]}`);
    process.exit(1);
});
