/* server/web/app.js -- the web page's behaviour: talks to rspwalkd's /v1 API
 * (docs/usage.md) and keeps the three panes (targets, stacks, merged tree)
 * current from the events stream; starts sample runs and shows their
 * progress and flame graphs (the page's icicle, and speedscope/ when no
 * bearer token is needed: speedscope fetches the profile itself, without one).
 *
 * Every string from the server reaches the page as text (lib.js's h()), never
 * as HTML.  The bearer token lives in sessionStorage and goes only in the
 * Authorization header: the events stream is read with fetch() for that
 * reason (EventSource cannot send headers), never with a token in the URL.
 */
"use strict";

(function () {
    const { h, replace } = window.RW;
    const $ = (id) => document.getElementById(id);
    const TOKEN_KEY = "rspwalkd.token";
    /* A walk of a running target stops and resumes it; that target's state
     * events during the walk and this long after it are taken as the walk's,
     * not as news worth another walk (which would never settle).  Targets
     * that were not running are not touched by a walk: their events count. */
    const WALK_QUIET_MS = 1500;
    /* Above this many nodes the tree opens only its first levels. */
    const TREE_OPEN_ALL_MAX = 300;
    const TREE_OPEN_DEPTH = 4;

    const st = {
        targets: new Map(), /* id (string) -> target object as GET /v1/targets writes it */
        order: [],
        selected: null,
        stacksSeq: 0,
        stacksDoc: null,
        stacksTarget: null,
        treeSeq: 0,
        tree: null,
        view: "tree",
        iciclePath: null, /* function names from the root of the zoomed node */
        closed: new Set(), /* tree paths the user closed */
        quiet: new Map(), /* target id -> time until which its events are a walk's */
        wantStop: new Set(), /* targets the user paused: their next stop is shown */
        lastEvent: new Map(), /* target id -> time of its last event */
        treeTimer: null,
        listTimer: null,
        tokenWaiters: [],
        events: null, /* AbortController of the events stream */
        sampleTimer: null,
        runs: [], /* sample runs as GET /v1/samples lists them, newest first */
        runTargets: new Map(), /* run id -> its target ids, quiet until the run ends */
        runShown: null, /* id of the run whose tree the tree pane shows, or null */
        runDoc: null, /* that run's record with its "tree" (GET /v1/samples/ID) */
        runsSeq: 0,
        sampling: true, /* false when the server has no /v1/samples */
        needsToken: false, /* the server asks for a token: no speedscope links */
    };

    class ApiError extends Error {
        constructor(status, message) {
            super(message);
            this.status = status;
        }
    }

    function token() {
        try {
            return window.sessionStorage.getItem(TOKEN_KEY) || "";
        } catch (e) {
            return "";
        }
    }

    function authHeaders(extra) {
        const headers = Object.assign({}, extra);
        const t = token();
        if (t) headers.Authorization = "Bearer " + t;
        return headers;
    }

    /* One API call: the parsed JSON answer (null for an empty one), or an
     * ApiError carrying the server's {"error"} message. */
    async function api(method, path, body) {
        const headers = authHeaders({ Accept: "application/json" });
        const init = { method, headers, cache: "no-store" };
        if (body !== undefined) {
            headers["Content-Type"] = "application/json";
            init.body = JSON.stringify(body);
        }
        let res;
        try {
            res = await fetch(path, init);
        } catch (e) {
            throw new ApiError(0, `${method} /${path}: the server did not answer`);
        }
        const text = await res.text();
        let data = null;
        let parsed = true;
        if (text) {
            try {
                data = JSON.parse(text);
            } catch (e) {
                parsed = false;
            }
        }
        if (res.status === 401) needToken(data && data.error);
        if (!res.ok) {
            const msg =
                data && typeof data.error === "string"
                    ? data.error
                    : `${method} /${path}: HTTP ${res.status}`;
            throw new ApiError(res.status, msg);
        }
        if (!parsed) throw new ApiError(res.status, `${method} /${path}: the answer is not JSON`);
        return data;
    }

    function showError(el, err) {
        if (!err) {
            el.hidden = true;
            el.textContent = "";
            return;
        }
        el.textContent = err.message || String(err);
        el.hidden = false;
    }

    function stateBadge(state, extraClass) {
        return h(
            "span",
            { class: "badge state-" + (state || "unknown") + (extraClass ? " " + extraClass : "") },
            state || "unknown"
        );
    }

    function timeNow() {
        return new Date().toLocaleTimeString([], { hour12: false });
    }

    /* ---- bearer token ------------------------------------------------------ */

    function needToken(message) {
        const form = $("token-form");
        const wasHidden = form.hidden;
        form.hidden = false;
        $("token-forget").hidden = true;
        setLive("auth", message || "the server asks for a bearer token");
        renderViewerLinks();
        if (wasHidden) $("token-input").focus();
    }

    function tokenSubmitted(ev) {
        ev.preventDefault();
        const value = $("token-input").value.trim();
        if (!value) return;
        try {
            window.sessionStorage.setItem(TOKEN_KEY, value);
        } catch (e) {
            /* storage refused (private mode): the token lasts until reload */
        }
        $("token-input").value = "";
        $("token-form").hidden = true;
        $("token-forget").hidden = false;
        const waiters = st.tokenWaiters.splice(0);
        for (const w of waiters) w();
        reloadAll();
    }

    function tokenForget() {
        try {
            window.sessionStorage.removeItem(TOKEN_KEY);
        } catch (e) {
            /* nothing stored */
        }
        $("token-forget").hidden = true;
        renderViewerLinks();
        if (st.events) st.events.abort();
    }

    /* ---- the events stream ------------------------------------------------- */

    function setLive(state, detail) {
        const el = $("live");
        el.dataset.state = state;
        const text = {
            connecting: "connecting…",
            live: "live",
            offline: "offline, retrying",
            auth: "token required",
        }[state];
        $("live-text").textContent = text;
        el.title = detail || "";
    }

    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

    /* Read GET /v1/events for ever: reconnect with backoff, and after a
     * reconnection reload everything (events were missed meanwhile). */
    async function runEvents() {
        let backoffMs = 1000;
        let first = true;
        for (;;) {
            const ctrl = new AbortController();
            st.events = ctrl;
            const parser = new window.RW.SseParser(onEvent);
            let waitMs = backoffMs;
            try {
                const res = await fetch("v1/events", {
                    headers: authHeaders({ Accept: "text/event-stream" }),
                    cache: "no-store",
                    signal: ctrl.signal,
                });
                if (res.status === 401) {
                    needToken();
                    await new Promise((resolve) => st.tokenWaiters.push(resolve));
                    continue;
                }
                if (!res.ok || !res.body) throw new Error("GET /v1/events: HTTP " + res.status);
                setLive("live");
                backoffMs = 1000;
                /* what happened before the stream was up: after a reconnection
                 * anything; on the first, between the page's load and now */
                if (first) loadTargets();
                else reloadAll();
                first = false;
                const reader = res.body.getReader();
                const dec = new TextDecoder();
                for (;;) {
                    const { value, done } = await reader.read();
                    if (done) break;
                    parser.feed(dec.decode(value, { stream: true }));
                }
                throw new Error("the events stream ended");
            } catch (e) {
                if (ctrl.signal.aborted) {
                    setLive("connecting");
                    continue; /* token changed: reconnect at once */
                }
                setLive("offline", e.message);
                if (parser.retryMs !== null) waitMs = parser.retryMs;
            }
            await sleep(waitMs);
            backoffMs = Math.min(backoffMs * 2, 15000);
        }
    }

    function onEvent(ev) {
        let data;
        try {
            data = JSON.parse(ev.data);
        } catch (e) {
            return; /* not ours to show */
        }
        if (!data || typeof data !== "object") return;
        if (ev.type === "target") onTargetEvent(data);
        else if (ev.type === "sample") onSampleEvent(data);
    }

    function isRemovalEvent(d) {
        return d.state === "deleted" || d.state === "removed" || d.deleted === true ||
            d.removed === true || d.event === "deleted" || d.event === "removed";
    }

    function onTargetEvent(d) {
        if (d.id === undefined || d.id === null) return;
        const id = String(d.id);
        const t = st.targets.get(id);
        st.lastEvent.set(id, Date.now());
        if (isRemovalEvent(d)) {
            if (t) dropTarget(id);
            return;
        }
        if (!t) {
            scheduleTargetsReload(); /* added elsewhere: fetch its whole record */
            return;
        }
        const prev = t.state;
        for (const k of ["state", "error", "signal", "arch", "stub", "name", "target"]) {
            if (k in d) t[k] = d[k];
        }
        /* the server names an error only for states that have one */
        if (!("error" in d) && (d.state === "stopped" || d.state === "running")) t.error = null;
        renderTargets();
        if (id === st.selected) renderStacksHead();
        if (prev !== t.state) stateChanged(id);
    }

    /* Target ID has a new state: walk it again if it stopped and is shown,
     * redraw the tree when a stack may have changed. */
    function stateChanged(id) {
        const t = st.targets.get(id);
        const quiet = (st.quiet.get(id) || 0) > Date.now() && !st.wantStop.has(id);
        if (t.state === "stopped") st.wantStop.delete(id);
        if (id === st.selected) {
            if (t.state === "stopped" && !quiet) loadStacks();
            else markStacksStale();
        }
        if (!quiet && ["stopped", "exited", "link-lost"].includes(t.state)) scheduleTree();
    }

    function onSampleEvent(d) {
        sampleProgress(d);
        const el = $("sample-status");
        const parts = ["sample " + (d.id !== undefined ? d.id : "")];
        if (typeof d.ticks === "number") parts.push(d.ticks + (d.ticks === 1 ? " tick" : " ticks"));
        if (typeof d.elapsed === "number") parts.push(d.elapsed.toFixed(1) + " s");
        if (d.state) parts.push(String(d.state));
        el.textContent = parts.join(" · ");
        el.hidden = false;
        clearTimeout(st.sampleTimer);
        if (d.state && d.state !== "running")
            st.sampleTimer = setTimeout(() => (el.hidden = true), 15000);
    }

    /* ---- targets ------------------------------------------------------------ */

    /* The list again; a state that changed since (an event missed while the
     * stream was down) is acted on as its event would have been. */
    async function loadTargets() {
        const changed = [];
        try {
            const list = await api("GET", "v1/targets");
            const arr = Array.isArray(list) ? list : (list && list.targets) || [];
            const before = st.targets;
            st.targets = new Map();
            st.order = [];
            for (const t of arr) {
                const id = String(t.id);
                st.targets.set(id, t);
                st.order.push(id);
                if (before.has(id) && before.get(id).state !== t.state) changed.push(id);
            }
            showError($("targets-error"), null);
        } catch (e) {
            showError($("targets-error"), e);
        }
        if (st.selected !== null && !st.targets.has(st.selected)) select(null);
        renderTargets();
        renderStacksHead();
        for (const id of changed) stateChanged(id);
    }

    function scheduleTargetsReload() {
        clearTimeout(st.listTimer);
        st.listTimer = setTimeout(loadTargets, 200);
    }

    function renderTargets() {
        const ul = $("targets");
        const active = document.activeElement;
        const focusedLi = active && active.closest ? active.closest("li[data-target-id]") : null;
        const focusedId = focusedLi ? focusedLi.dataset.targetId : null;
        const items = st.order.map((id) => {
            const t = st.targets.get(id);
            const selected = id === st.selected;
            const sig = t.state === "stopped" ? window.RW.signalName(t.signal) : null;
            const info = [t.arch, t.stub, sig].filter(Boolean).join(" · ");
            return h(
                "li",
                {
                    class: "target" + (selected ? " selected" : ""),
                    dataset: { targetId: id, state: t.state || "" },
                },
                h(
                    "button",
                    {
                        type: "button",
                        class: "target-btn",
                        "aria-current": selected ? "true" : null,
                        onclick: () => select(id),
                        onkeydown: targetKey,
                    },
                    h("span", { class: "target-line" },
                        h("span", { class: "target-name" }, t.name || t.target || "target " + id),
                        stateBadge(t.state)),
                    h("span", { class: "target-addr mono" }, t.target || ""),
                    info ? h("span", { class: "target-info muted" }, info) : null
                ),
                t.error ? h("p", { class: "target-error" }, t.error) : null
            );
        });
        replace(ul, items);
        $("targets-empty").hidden = st.order.length > 0;
        $("targets-count").textContent = st.order.length ? String(st.order.length) : "";
        if (focusedId !== null) {
            const btn = ul.querySelector(
                `li[data-target-id="${CSS.escape(focusedId)}"] .target-btn`);
            if (btn) btn.focus();
        }
    }

    /* Arrow keys move between the targets' buttons. */
    function targetKey(ev) {
        const buttons = Array.from($("targets").querySelectorAll(".target-btn"));
        const i = buttons.indexOf(ev.currentTarget);
        let j = -1;
        if (ev.key === "ArrowDown") j = Math.min(i + 1, buttons.length - 1);
        else if (ev.key === "ArrowUp") j = Math.max(i - 1, 0);
        else if (ev.key === "Home") j = 0;
        else if (ev.key === "End") j = buttons.length - 1;
        if (j < 0) return;
        ev.preventDefault();
        buttons[j].focus();
    }

    function dropTarget(id) {
        st.targets.delete(id);
        st.order = st.order.filter((x) => x !== id);
        if (st.selected === id) select(null);
        renderTargets();
        scheduleTree();
    }

    async function addTarget(ev) {
        ev.preventDefault();
        const form = ev.currentTarget;
        const body = {};
        for (const k of ["target", "exe", "sysroot", "name"]) {
            const v = form.elements[k].value.trim();
            if (v) body[k] = v;
        }
        const button = form.querySelector("button[type=submit]");
        button.disabled = true;
        try {
            const res = await api("POST", "v1/targets", body);
            showError($("add-error"), null);
            form.reset();
            await loadTargets();
            if (res && res.id !== undefined) select(String(res.id));
            scheduleTree();
        } catch (e) {
            showError($("add-error"), e);
        } finally {
            button.disabled = false;
        }
    }

    /* ---- the selected target's stacks ------------------------------------- */

    function select(id) {
        st.selected = id;
        const hash = id === null ? "" : "#target=" + encodeURIComponent(id);
        if (window.location.hash !== hash)
            window.history.replaceState(null, "", hash || window.location.pathname);
        renderTargets();
        renderStacksHead();
        st.stacksDoc = null;
        st.stacksTarget = null;
        showError($("stacks-error"), null);
        if (id === null) {
            replace($("stacks"), h("p", { class: "muted empty" },
                "Select a target to see its threads."));
            $("stacks-meta").textContent = "";
            return;
        }
        loadStacks(false);
    }

    function renderStacksHead() {
        const t = st.selected === null ? null : st.targets.get(st.selected);
        const badge = $("stacks-state");
        $("stacks-actions").hidden = !t;
        if (!t) $("sample-form").hidden = true;
        if (!t) {
            $("stacks-heading").textContent = "Stacks";
            badge.hidden = true;
            return;
        }
        $("stacks-heading").textContent = "Stacks of " + (t.name || t.target || "target " + t.id);
        badge.className = "badge state-" + (t.state || "unknown");
        badge.textContent = t.state || "unknown";
        badge.hidden = false;
        $("btn-resume").disabled = t.state !== "stopped";
        $("btn-pause").disabled = t.state !== "running";
        $("btn-refresh").disabled = !(t.state === "stopped" || t.state === "running");
        $("sample-form").hidden = !st.sampling;
        $("sample-form").querySelector("button").disabled =
            !(t.state === "stopped" || t.state === "running");
    }

    /* FORCE: walk whatever the state (the Snapshot button); otherwise only a
     * stopped target is walked, since walking a running one stops it. */
    async function loadStacks(force) {
        const id = st.selected;
        const t = id === null ? null : st.targets.get(id);
        if (!t) return;
        const box = $("stacks");
        if (!force && t.state !== "stopped") {
            const why = {
                running: "The target is running. Snapshot stops it for a walk and resumes it.",
                connecting: "Connecting to the stub…",
                exited: "The program exited.",
                "link-lost": "The link to the stub is lost; the server is reconnecting.",
            }[t.state] || "No stacks to show.";
            if (st.stacksTarget === id && st.stacksDoc) markStacksStale();
            else replace(box, h("p", { class: "muted empty" }, why));
            return;
        }
        const seq = ++st.stacksSeq;
        box.setAttribute("aria-busy", "true");
        const walked = walkBegin(t.state === "running" ? [id] : []);
        try {
            const doc = await api("GET", "v1/targets/" + encodeURIComponent(id) + "/stacks?lines=1");
            if (seq !== st.stacksSeq || st.selected !== id) return;
            st.stacksDoc = doc;
            st.stacksTarget = id;
            showError($("stacks-error"), null);
            renderStacks(doc);
        } catch (e) {
            if (seq !== st.stacksSeq) return;
            showError($("stacks-error"), e);
        } finally {
            walkEnd(walked);
            if (seq === st.stacksSeq) box.setAttribute("aria-busy", "false");
        }
    }

    /* A walk of IDS (the running ones among the walked) begins: their state
     * events are the walk's until walkEnd and a while after. */
    function walkBegin(ids) {
        for (const id of ids) st.quiet.set(id, Infinity);
        return ids;
    }

    function walkEnd(ids) {
        for (const id of ids) st.quiet.set(id, Date.now() + WALK_QUIET_MS);
    }

    function markStacksStale() {
        const box = $("stacks");
        if (!box.querySelector(".thread")) return;
        box.classList.add("stale");
        const t = st.targets.get(st.selected);
        $("stacks-meta").textContent =
            "From the last walk; the target is " + (t ? t.state : "gone") + " now.";
    }

    function renderStacks(doc) {
        const box = $("stacks");
        box.classList.remove("stale");
        const threads = Array.isArray(doc && doc.threads) ? doc.threads : [];
        const meta = [];
        if (doc.arch) meta.push(doc.arch);
        meta.push(threads.length + (threads.length === 1 ? " thread" : " threads"));
        if (doc.stats && typeof doc.stats.round_trips === "number")
            meta.push(doc.stats.round_trips + " round trips");
        meta.push("walked at " + timeNow());
        $("stacks-meta").textContent = meta.join(" · ");
        if (threads.length === 0) {
            replace(box, h("p", { class: "muted empty" }, "No threads."));
            return;
        }
        replace(box, threads.map(renderThread));
    }

    function renderThread(t) {
        const frames = Array.isArray(t.frames) ? t.frames : [];
        const top = frames.length ? window.RW.frameLabel(frames[0]) : null;
        const label = "Thread " + t.id;
        return h(
            "details",
            { class: "thread", open: true, dataset: { threadId: String(t.id) } },
            h(
                "summary",
                {},
                h("span", { class: "thread-id" }, label),
                t.lwp !== undefined ? h("span", { class: "muted" }, "lwp " + t.lwp) : null,
                t.stopped ? h("span", { class: "badge stop-reason" }, "reported the stop") : null,
                h("span", { class: "muted" },
                    frames.length + (frames.length === 1 ? " frame" : " frames")),
                top ? h("span", { class: "thread-top mono" }, "in " + top) : null,
                t.end && t.end !== "bottom"
                    ? h("span", { class: "badge end-" + t.end, title: "why the walk ended" },
                        "end: " + t.end)
                    : null
            ),
            t.error ? h("p", { class: "error" }, t.error) : null,
            frames.length
                ? h(
                    "table",
                    { class: "frames" },
                    h("caption", { class: "visually-hidden" }, "Frames of " + label),
                    h("thead", {}, h("tr", {},
                        h("th", { scope: "col" }, "#"),
                        h("th", { scope: "col" }, "Function"),
                        h("th", { scope: "col" }, "Where"),
                        h("th", { scope: "col" }, "PC"))),
                    h("tbody", {}, frames.map(renderFrame))
                )
                : null
        );
    }

    function renderFrame(f) {
        const RW = window.RW;
        const known = f.function !== null && f.function !== undefined;
        const src = RW.frameSource(f);
        const mod = RW.basename(f.module);
        return h(
            "tr",
            {
                class: "frame kind-" + (f.kind || "normal"),
                dataset: { function: known ? String(f.function) : "", level: String(f.level) },
            },
            h("td", { class: "level mono" }, "#" + f.level),
            h(
                "td",
                { class: "func", title: RW.frameLabel(f) },
                h("span", { class: known ? "fname" : "fname unknown" },
                    known ? String(f.function) : "??"),
                known && f.offset ? h("span", { class: "offset muted" }, "+" + f.offset) : null,
                f.kind && f.kind !== "normal" ? h("span", { class: "badge kind" }, f.kind) : null,
                f.trust === "scan"
                    ? h("span", { class: "badge scan", title: "found by stack scanning" }, "scan")
                    : null
            ),
            h(
                "td",
                { class: "where" },
                src ? h("span", { class: "src mono" }, src) : null,
                mod ? h("span", { class: "module", title: String(f.module) }, mod) : null
            ),
            h("td", { class: "pc mono" }, f.pc || "")
        );
    }

    async function targetAction(verb) {
        const id = st.selected;
        if (id === null) return;
        const btn = $(verb === "resume" ? "btn-resume" : "btn-pause");
        btn.disabled = true;
        if (verb === "pause") st.wantStop.add(id);
        const t0 = Date.now();
        try {
            await api("POST", "v1/targets/" + encodeURIComponent(id) + "/" + verb);
            showError($("stacks-error"), null);
            /* The new state comes as events, in order; the answer's state
             * may be older than an event already here, so it is not used.
             * Without any event for the target soon, the list is asked. */
            setTimeout(() => {
                if ((st.lastEvent.get(id) || 0) < t0) loadTargets();
            }, 2000);
        } catch (e) {
            showError($("stacks-error"), e);
        } finally {
            renderStacksHead();
        }
    }

    let removeTimer = null;
    async function removeSelected() {
        const id = st.selected;
        const btn = $("btn-remove");
        if (id === null) return;
        if (btn.dataset.armed !== "1") {
            btn.dataset.armed = "1";
            btn.textContent = "Confirm remove";
            clearTimeout(removeTimer);
            removeTimer = setTimeout(disarmRemove, 4000);
            return;
        }
        disarmRemove();
        try {
            await api("DELETE", "v1/targets/" + encodeURIComponent(id));
            dropTarget(id);
        } catch (e) {
            showError($("stacks-error"), e);
        }
    }

    function disarmRemove() {
        const btn = $("btn-remove");
        btn.dataset.armed = "";
        btn.textContent = "Remove";
        clearTimeout(removeTimer);
    }

    /* ---- sample runs --------------------------------------------------------- */

    function runTitle(r) {
        const ids = Array.isArray(r.targets) ? r.targets : [];
        const names = ids.map((id) => {
            const t = st.targets.get(String(id));
            return t ? t.name || t.target || "target " + id : "target " + id;
        });
        return names.join(", ") || "no targets";
    }

    /* Start a run of the selected target at the form's rate and length. */
    async function sampleSubmitted(ev) {
        ev.preventDefault();
        const id = st.selected;
        if (id === null) return;
        const form = ev.currentTarget;
        const hz = Number(form.elements.hz.value);
        const seconds = Number(form.elements.seconds.value);
        const button = form.querySelector("button[type=submit]");
        button.disabled = true;
        const target = /^[0-9]+$/.test(id) ? Number(id) : id;
        /* the run stops and resumes the target at every tick: its state
         * events until the run ends are the run's, not news to walk again */
        walkBegin([id]);
        try {
            const res = await api("POST", "v1/samples", { targets: [target], hz, seconds });
            showError($("sample-error"), null);
            if (res && res.id !== undefined) st.runTargets.set(String(res.id), [id]);
            else walkEnd([id]);
            await loadRuns();
        } catch (e) {
            walkEnd([id]);
            showError($("sample-error"), e);
        } finally {
            button.disabled = false;
            renderStacksHead();
        }
    }

    async function loadRuns() {
        const seq = ++st.runsSeq;
        try {
            const doc = await api("GET", "v1/samples");
            if (seq !== st.runsSeq) return;
            st.runs = (doc && Array.isArray(doc.samples) ? doc.samples : [])
                .slice().sort((a, b) => Number(b.id) - Number(a.id));
            st.sampling = true;
            showError($("runs-error"), null);
        } catch (e) {
            if (seq !== st.runsSeq) return;
            if (e.status === 404) {
                st.sampling = false; /* a server without sampling: nothing to offer */
            } else {
                showError($("runs-error"), e);
            }
        }
        $("runs-box").hidden = !st.sampling;
        for (const r of st.runs) if (r.state !== "running") runEnded(String(r.id));
        renderRuns();
        renderStacksHead();
    }

    /* Run ID is over: its targets' events count again. */
    function runEnded(id) {
        const ids = st.runTargets.get(id);
        if (!ids) return;
        st.runTargets.delete(id);
        walkEnd(ids);
        scheduleTree();
        if (ids.includes(st.selected)) loadStacks(false);
    }

    /* A "sample" event: the run's line follows it; its end brings the
     * finished record (and the tree, if that run is shown). */
    function sampleProgress(d) {
        if (d.id === undefined || d.id === null) return;
        const id = String(d.id);
        const r = st.runs.find((x) => String(x.id) === id);
        if (!r) {
            loadRuns(); /* started elsewhere, or before the list came */
            return;
        }
        for (const k of ["ticks", "elapsed", "state", "stored"]) if (k in d) r[k] = d[k];
        renderRuns();
        if (d.state && d.state !== "running") {
            runEnded(id);
            loadRuns();
            if (st.runShown === id) showRun(id);
        }
    }

    function renderRuns() {
        const list = $("runs");
        $("runs-empty").hidden = st.runs.length > 0;
        replace(list, st.runs.map((r) => {
            const id = String(r.id);
            const running = r.state === "running";
            const frac = window.RW.runProgress(r);
            const facts = [];
            if (typeof r.hz === "number") facts.push(r.hz + " Hz");
            if (typeof r.seconds === "number") facts.push(r.seconds + " s");
            if (typeof r.ticks === "number") facts.push(r.ticks + (r.ticks === 1 ? " tick" : " ticks"));
            const ss = st.needsToken ? null : window.RW.speedscopeHref(window.location.href,
                "v1/samples/" + encodeURIComponent(id) + "?format=speedscope",
                "rspwalkd sample " + id + ": " + runTitle(r));
            return h(
                "li",
                { class: "run" + (st.runShown === id ? " shown" : ""),
                    dataset: { runId: id, state: String(r.state || "") } },
                h("span", { class: "run-id" }, "#" + id),
                h("span", { class: "run-targets" }, runTitle(r)),
                stateBadge(r.state),
                running
                    ? h("progress", { max: "1", value: String(frac),
                        "aria-label": "progress of sample run " + id })
                    : null,
                h("span", { class: "muted run-facts" }, facts.join(" · ")),
                r.error ? h("span", { class: "error" }, String(r.error)) : null,
                h("span", { class: "run-actions" },
                    h("button", { type: "button", class: "run-flame", disabled: running,
                        title: "The run's stacks as an icicle in the tree pane",
                        onclick: () => showRun(id) }, "Flame graph"),
                    ss && !running
                        ? h("a", { class: "button run-speedscope", href: ss, target: "_blank",
                            rel: "noopener", title: "The run in speedscope (opens a new tab)" },
                        "speedscope")
                        : null)
            );
        }));
    }

    /* The tree pane draws run ID's merged stacks as an icicle. */
    async function showRun(id) {
        try {
            const doc = await api("GET", "v1/samples/" + encodeURIComponent(id) + "?format=json");
            if (!doc || !doc.tree) throw new Error("sample run " + id + " has no tree yet");
            st.runDoc = doc;
            st.runShown = id;
            st.iciclePath = null;
            showError($("tree-error"), null);
            $("tree-source-text").textContent = "Sample run #" + id + " of " + runTitle(doc) +
                (typeof doc.ticks === "number" ? " · " + doc.ticks + " ticks" : "") +
                (typeof doc.hz === "number" ? " at " + doc.hz + " Hz" : "");
            $("tree-source").hidden = false;
            renderRuns();
            setView("icicle");
            renderTree();
        } catch (e) {
            showError($("tree-error"), e);
        }
    }

    function showLiveTree() {
        st.runDoc = null;
        st.runShown = null;
        st.iciclePath = null;
        $("tree-source").hidden = true;
        renderRuns();
        renderTree();
    }

    /* speedscope fetches its profile without our Authorization header: behind
     * a token its links are left out and the page's own icicle serves. */
    function renderViewerLinks() {
        st.needsToken = !!token() || $("live").dataset.state === "auth";
        const a = $("tree-speedscope");
        a.hidden = st.needsToken;
        a.href = window.RW.speedscopeHref(window.location.href, "v1/tree?format=speedscope",
            "rspwalkd: the current stacks");
        renderRuns();
    }

    /* ---- the merged tree ---------------------------------------------------- */

    function scheduleTree() {
        clearTimeout(st.treeTimer);
        st.treeTimer = setTimeout(loadTree, 400);
    }

    async function loadTree() {
        const seq = ++st.treeSeq;
        const walked = walkBegin(st.order.filter((id) => st.targets.get(id).state === "running"));
        $("tree").setAttribute("aria-busy", "true");
        try {
            const doc = await api("GET", "v1/tree?format=json");
            if (seq !== st.treeSeq) return;
            st.tree = doc;
            showError($("tree-error"), null);
            if (!st.runDoc) renderTree();
        } catch (e) {
            if (seq === st.treeSeq) showError($("tree-error"), e);
        } finally {
            walkEnd(walked);
            $("tree").setAttribute("aria-busy", "false");
        }
    }

    /* The tree the pane draws: the shown sample run's, else the live one. */
    function shownTree() {
        return st.runDoc ? st.runDoc.tree : st.tree;
    }

    /* What a node's count counts: tasks in the live tree, stacks (one per
     * thread per tick) in a sample run's. */
    function countUnit() {
        return st.runDoc ? "stacks" : "tasks";
    }

    function renderTree() {
        const doc = shownTree();
        const root = doc && doc.tree;
        const tasks = doc && typeof doc.tasks === "number" ? doc.tasks : 0;
        if (st.runDoc) {
            const n = root && typeof root.count === "number" ? root.count : 0;
            $("tree-summary").textContent =
                tasks + (tasks === 1 ? " task" : " tasks") + " · " + n + " stacks sampled";
        } else {
            $("tree-summary").textContent =
                tasks + (tasks === 1 ? " task" : " tasks") + " · " + timeNow();
        }
        if (!root || tasks === 0) {
            replace($("tree"), h("p", { class: "muted empty" }, "No stacks to merge."));
            replace($("icicle-cells"));
            return;
        }
        const size = window.RW.treeSize(root);
        const openDepth = size <= TREE_OPEN_ALL_MAX ? Infinity : TREE_OPEN_DEPTH;
        replace($("tree"), h("ul", { class: "tree-root", role: "group" },
            treeNode(root, root.count || tasks, 0, "", openDepth)));
        renderIcicle();
    }

    function nodeName(n) {
        return n.function === null || n.function === undefined ? "??" : String(n.function);
    }

    function treeNode(node, total, depth, parentKey, openDepth) {
        const name = nodeName(node);
        const key = parentKey + "/" + name;
        const pct = total > 0 ? Math.round((1000 * (node.count || 0)) / total) / 10 : 0;
        const row = h(
            "span",
            { class: "tnode" },
            /* the module only on hover: the pane's width goes to the names */
            h("span", { class: "tfunc", title: node.module ? name + "\n" + node.module : name },
                name),
            h("span", { class: "tfill" }),
            h("span", { class: "tbar", "aria-hidden": "true" },
                h("span", { style: { width: pct + "%" } })),
            h("span", { class: "tcount", title: `${node.count} of ${total} ${countUnit()}` },
                String(node.count)),
            node.tasks ? h("span", { class: "ttasks mono muted" }, String(node.tasks)) : null
        );
        const kids = Array.isArray(node.children) ? node.children : [];
        const data = { function: name, count: String(node.count) };
        if (kids.length === 0) return h("li", { dataset: data }, h("div", { class: "leaf" }, row));
        const open = depth < openDepth && !st.closed.has(key);
        const details = h(
            "details",
            { open, ontoggle: (ev) => {
                if (ev.currentTarget.open) st.closed.delete(key);
                else st.closed.add(key);
            } },
            h("summary", {}, row),
            h("ul", { role: "group" },
                kids.map((c) => treeNode(c, total, depth + 1, key, openDepth)))
        );
        return h("li", { dataset: data }, details);
    }

    function hue(name) {
        let x = 0;
        for (let i = 0; i < name.length; i++) x = (x * 31 + name.charCodeAt(i)) >>> 0;
        return x % 360;
    }

    function renderIcicle() {
        const RW = window.RW;
        const doc = shownTree();
        const root = doc && doc.tree;
        const box = $("icicle-cells");
        if (!root) {
            replace(box);
            return;
        }
        let node = st.iciclePath ? RW.treeFind(root, st.iciclePath) : null;
        if (!node) st.iciclePath = null;
        node = node || root;
        const prefix = st.iciclePath ? st.iciclePath.slice(0, -1) : [];
        $("icicle-path").textContent = st.iciclePath
            ? st.iciclePath.join(" › ")
            : st.runDoc ? "every stack of sample run " + st.runShown : "all stacks";
        $("icicle-reset").hidden = !st.iciclePath;
        const { cells, depth } = RW.icicleLayout(node, 0.004);
        const rowPx = 24;
        box.style.height = depth * rowPx + "px";
        replace(box, cells.map((c) => {
            const name = nodeName(c.node);
            const full = prefix.concat(c.path);
            const title = `${name}: ${c.node.count} of ${root.count} ${countUnit()}` +
                (c.node.tasks ? " " + c.node.tasks : "") +
                (c.node.module ? "\n" + c.node.module : "");
            return h(
                "button",
                {
                    type: "button",
                    class: "cell",
                    role: "listitem",
                    title,
                    "aria-label": title.replace("\n", ", "),
                    dataset: { function: name, count: String(c.node.count) },
                    style: {
                        left: (c.x * 100).toFixed(3) + "%",
                        width: (c.w * 100).toFixed(3) + "%",
                        top: c.depth * rowPx + "px",
                        "--hue": hue(name),
                    },
                    /* a cell zooms in; the top cell zooms out one level */
                    onclick: () => {
                        if (c.depth > 0) st.iciclePath = full;
                        else st.iciclePath = prefix.length > 0 ? prefix : null;
                        renderIcicle();
                    },
                },
                name
            );
        }));
    }

    function setView(view) {
        st.view = view;
        $("view-tree").setAttribute("aria-pressed", String(view === "tree"));
        $("view-icicle").setAttribute("aria-pressed", String(view === "icicle"));
        $("tree").hidden = view !== "tree";
        $("icicle").hidden = view !== "icicle";
        if (view === "icicle") renderIcicle();
    }

    /* ---- start ------------------------------------------------------------- */

    async function reloadAll() {
        renderViewerLinks();
        loadRuns();
        await loadTargets();
        if (st.selected !== null) {
            renderStacksHead();
            loadStacks(false);
        }
        loadTree();
    }

    async function start() {
        $("token-form").addEventListener("submit", tokenSubmitted);
        $("token-forget").addEventListener("click", tokenForget);
        $("token-forget").hidden = !token();
        $("add-form").addEventListener("submit", addTarget);
        $("btn-resume").addEventListener("click", () => targetAction("resume"));
        $("btn-pause").addEventListener("click", () => targetAction("pause"));
        $("btn-refresh").addEventListener("click", () => loadStacks(true));
        $("btn-remove").addEventListener("click", removeSelected);
        $("view-tree").addEventListener("click", () => setView("tree"));
        $("view-icicle").addEventListener("click", () => setView("icicle"));
        $("tree-refresh").addEventListener("click", loadTree);
        $("sample-form").addEventListener("submit", sampleSubmitted);
        $("tree-live").addEventListener("click", showLiveTree);
        renderViewerLinks();
        $("icicle-reset").addEventListener("click", () => {
            st.iciclePath = null;
            renderIcicle();
        });
        runEvents();
        await loadTargets();
        const m = /^#target=(.+)$/.exec(window.location.hash);
        const want = m ? decodeURIComponent(m[1]) : null;
        if (want !== null && st.targets.has(want)) select(want);
        else if (st.order.length > 0) select(st.order[0]);
        else select(null);
        loadTree();
        loadRuns();
    }

    start();
})();
