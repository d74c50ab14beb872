#!/usr/bin/env node
// Run a test page in Debian's headless chromium and return its verdict.
//
// Owns: a static HTTP server on loopback for one directory, one chromium
// process driven over the DevTools protocol on a pipe (no port, no
// WebSocket, no npm packages), console forwarding, and the exit status.
// The page owns the test: it must set `window.__webproofResult` to a
// promise of `{ok: boolean, ...}`; this driver prints that object as JSON
// and exits 0 iff `ok === true`.
//
// node web/driver/chromium.mjs --root DIR --page PATH[?QUERY]
//      [--timeout SECONDS] [--isolate] [--chromium /usr/bin/chromium]
//      [--cpu-profile FILE] [--js-flags "V8 FLAGS"] [--bench] [--rss]
//
// `--isolate` serves COOP/COEP headers (cross-origin isolation, needed for
// SharedArrayBuffer and wasm threads). Dedicated workers the page starts
// are attached too (their console is forwarded). `--cpu-profile FILE`
// samples the page's and its workers' JavaScript and wasm (200 us) and
// writes DevTools profiles: FILE for the page, FILE.worker-N for workers
// (summarise them with web/driver/profile-summary.mjs). `--js-flags`
// (or CHROMIUM_JS_FLAGS) passes V8 flags, e.g. `--no-liftoff` to compare
// with wasm compiled by the optimising tier from the start.
//
// `--bench` is for `webproof bench --target browser`, which reads the
// driver's stdout as a prover's: when the page logs `webproof:start` (its
// engine is loaded and the measured proof begins) the driver prints
// `{"event":"start"}` at once, and the result line gains
// `renderer_peak_rss_bytes`, the peak resident memory (VmHWM, from /proc,
// read before chromium is stopped) of the renderer process that ran the
// page and its workers (the one with the most CPU time), that renderer's
// CPU time (`renderer_cpu_ms`), and `renderers_peak_rss_sum_bytes` over
// every renderer. `--rss` adds those three fields alone (the tests' and
// scripts/browser-prover-test.sh's memory figures).
//
// Chromium does not outlive the driver: a signal (SIGTERM, SIGINT,
// SIGHUP) or an error stops it and removes its profile before the driver
// exits, and it is started through util-linux's `setpriv --pdeathsig KILL`
// where that exists, so it dies even with a SIGKILLed driver. (The bench
// harness also kills the driver's whole process group.)

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize, resolve, sep } from "node:path";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const root = resolve(opt("root", "."));
const page = opt("page", "/index.html");
const timeoutSecs = Number(opt("timeout", "600"));
const isolate = args.includes("--isolate");
const chromiumPath = opt("chromium", process.env.CHROMIUM || "/usr/bin/chromium");
const cpuProfile = opt("cpu-profile", null);
const jsFlags = opt("js-flags", process.env.CHROMIUM_JS_FLAGS || "");
const bench = args.includes("--bench");
const rss = bench || args.includes("--rss");

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".css": "text/css",
};

function serve(dir) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const file = normalize(join(dir, path.endsWith("/") ? path + "index.html" : path));
    if (!(file === dir || file.startsWith(dir + sep))) {
      res.writeHead(403).end();
      return;
    }
    let body;
    try {
      if (!statSync(file).isFile()) throw new Error("not a file");
      body = readFileSync(file);
    } catch {
      res.writeHead(404).end();
      return;
    }
    const headers = {
      "content-type": MIME[extname(file)] || "application/octet-stream",
      "cache-control": "no-store",
    };
    if (isolate) {
      headers["cross-origin-opener-policy"] = "same-origin";
      headers["cross-origin-embedder-policy"] = "require-corp";
    }
    res.writeHead(200, headers).end(body);
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

// Minimal DevTools client over --remote-debugging-pipe: fd 3 carries
// commands to chromium, fd 4 its replies and events, NUL-terminated JSON.
class Cdp {
  constructor(proc) {
    this.out = proc.stdio[3];
    this.next = 1;
    this.pending = new Map();
    this.listeners = [];
    let buf = "";
    proc.stdio[4].on("data", (chunk) => {
      buf += chunk.toString("utf8");
      let i;
      while ((i = buf.indexOf("\0")) >= 0) {
        const msg = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (msg.id && this.pending.has(msg.id)) {
          const { ok, fail } = this.pending.get(msg.id);
          this.pending.delete(msg.id);
          msg.error ? fail(new Error(`${msg.error.message} (${msg.error.code})`)) : ok(msg.result);
        } else {
          for (const l of this.listeners) l(msg);
        }
      }
    });
  }
  send(method, params = {}, sessionId) {
    const id = this.next++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    this.out.write(JSON.stringify(msg) + "\0");
    return new Promise((ok, fail) => this.pending.set(id, { ok, fail }));
  }
  once(method, sessionId) {
    return new Promise((ok) => {
      const l = (m) => {
        if (m.method === method && m.sessionId === sessionId) {
          this.listeners.splice(this.listeners.indexOf(l), 1);
          ok(m.params);
        }
      };
      this.listeners.push(l);
    });
  }
}

// Every process below `root` (chromium forks its renderers from a zygote).
function descendants(root) {
  const parent = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const out = [];
  let frontier = [root];
  while (frontier.length) {
    const next = [];
    for (const [pid, ppid] of parent) if (frontier.includes(ppid)) next.push(pid);
    out.push(...next);
    frontier = next;
  }
  return out;
}

// Peak resident memory (VmHWM, bytes) of the renderer that ran the page:
// the one with the most CPU time (headless chromium keeps other renderers,
// a blank tab and a spare, at a baseline of their own), and the sum over
// all renderers.
function rendererPeakRss(browserPid) {
  let best = { cpu: -1, hwm: 0 };
  let sum = 0;
  for (const pid of descendants(browserPid)) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer")) continue;
      const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cpu = Number(f[11]) + Number(f[12]); // utime + stime, ticks
      const hwm = m ? Number(m[1]) * 1024 : 0;
      sum += hwm;
      console.error(`driver: renderer ${pid}: VmHWM ${(hwm / 2 ** 20).toFixed(0)} MiB, CPU ${cpu} ticks`);
      if (cpu > best.cpu) best = { cpu, hwm };
    } catch {
      // Gone meanwhile.
    }
  }
  // /proc counts CPU in USER_HZ ticks, 100 per second on Linux.
  return { renderer_peak_rss_bytes: best.hwm, renderer_cpu_ms: Math.max(best.cpu, 0) * 10, renderers_peak_rss_sum_bytes: sum };
}

// util-linux's setpriv, if here: it starts chromium with PR_SET_PDEATHSIG,
// so chromium dies with this driver even when the driver is SIGKILLed
// (node cannot set that on a child itself).
function setpriv() {
  for (const p of ["/usr/bin/setpriv", "/bin/setpriv"]) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // Not there.
    }
  }
  return null;
}

// Set once chromium runs: stop it and remove its profile.
let stopChromium = null;

// SIGTERM, SIGINT, SIGHUP: stop chromium before exiting (by default node
// would exit at once and leave chromium and its profile behind).
for (const [sig, n] of [["SIGTERM", 15], ["SIGINT", 2], ["SIGHUP", 1]]) {
  process.on(sig, async () => {
    console.error(`driver: ${sig}: stopping chromium`);
    if (stopChromium) await stopChromium();
    process.exit(128 + n);
  });
}

function fmtConsole(p) {
  return p.args.map((a) => (a.value !== undefined ? String(a.value) : a.description || a.type)).join(" ");
}

async function main() {
  const server = await serve(root);
  const url = `http://127.0.0.1:${server.address().port}${page.startsWith("/") ? "" : "/"}${page}`;
  const profile = mkdtempSync(join(tmpdir(), "webproof-chromium-"));
  const wrapper = setpriv();
  const proc = spawn(
    wrapper ?? chromiumPath,
    [
      ...(wrapper ? ["--pdeathsig", "KILL", "--", chromiumPath] : []),
      "--headless=new",
      "--no-sandbox", // CI runs as root, where the sandbox cannot start
      "--remote-debugging-pipe",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-extensions",
      "--disable-background-networking",
      `--user-data-dir=${profile}`,
      ...(jsFlags ? [`--js-flags=${jsFlags}`] : []),
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((ok) => proc.on("exit", ok));
  // Chromium writes its profile until it has exited: wait before removing.
  const cleanup = async () => {
    proc.kill("SIGKILL");
    await Promise.race([exited, new Promise((ok) => setTimeout(ok, 5000))]);
    server.close();
    // Chromium's helpers (crashpad, a late renderer) may still write into
    // the profile after the browser process is gone: retry for a while,
    // then leave the temporary directory rather than fail the run.
    for (let attempt = 0; ; attempt++) {
      try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
        break;
      } catch (e) {
        if (attempt >= 20) {
          console.error(`warning: could not remove ${profile}: ${e.message}`);
          break;
        }
        await new Promise((ok) => setTimeout(ok, 250));
      }
    }
  };
  let closing = false;
  let stopped = null;
  stopChromium = () => {
    closing = true;
    stopped ??= cleanup();
    return stopped;
  };
  const timer = setTimeout(async () => {
    console.error(`timeout after ${timeoutSecs} s loading ${url}`);
    await stopChromium();
    process.exit(2);
  }, timeoutSecs * 1000);
  proc.on("exit", (code) => {
    if (!closing && code !== 0) {
      console.error(`chromium exited with ${code}\n${stderr.slice(-4000)}`);
      process.exit(3);
    }
  });

  const cdp = new Cdp(proc);
  const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
  // Sessions to profile: the page's, then each worker's as it attaches.
  const profiled = [];
  const startProfiler = async (sid) => {
    await cdp.send("Profiler.enable", {}, sid);
    await cdp.send("Profiler.setSamplingInterval", { interval: 200 }, sid);
    await cdp.send("Profiler.start", {}, sid);
    profiled.push(sid);
  };
  const sessions = new Map([[sessionId, "page"]]);
  let workers = 0;
  cdp.listeners.push((m) => {
    if (m.method === "Target.attachedToTarget" && sessions.has(m.sessionId)) {
      // A worker of the page: forward its console, profile it, let it run.
      const sid = m.params.sessionId;
      sessions.set(sid, `worker ${++workers}`);
      (async () => {
        try {
          await cdp.send("Runtime.enable", {}, sid);
          if (cpuProfile) await startProfiler(sid);
        } finally {
          // The worker waits for this before it runs anything.
          await cdp.send("Runtime.runIfWaitingForDebugger", {}, sid);
        }
      })().catch((e) => console.error(`driver: worker attach: ${e}`));
      return;
    }
    const who = sessions.get(m.sessionId);
    if (!who) return;
    if (m.method === "Runtime.consoleAPICalled") {
      const text = fmtConsole(m.params);
      if (bench && who === "page" && text === "webproof:start") process.stdout.write('{"event":"start"}\n');
      console.error(`[${who} ${m.params.type}] ${text}`);
    }
    if (m.method === "Runtime.exceptionThrown") {
      const d = m.params.exceptionDetails;
      console.error(`[${who} exception] ${d.exception?.description || d.text}`);
    }
  });
  await cdp.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }, sessionId);
  await cdp.send("Page.enable", {}, sessionId);
  await cdp.send("Runtime.enable", {}, sessionId);
  if (cpuProfile) await startProfiler(sessionId);
  const loaded = cdp.once("Page.loadEventFired", sessionId);
  const nav = await cdp.send("Page.navigate", { url }, sessionId);
  if (nav.errorText) throw new Error(`navigation to ${url} failed: ${nav.errorText}`);
  await loaded;
  // The page may set the promise after load (module scripts, async setup).
  const expr = `new Promise((ok) => { const t = () => window.__webproofResult ? ok(window.__webproofResult) : setTimeout(t, 20); t(); })`;
  const r = await cdp.send(
    "Runtime.evaluate",
    { expression: expr, awaitPromise: true, returnByValue: true },
    sessionId,
  );
  let result;
  if (r.exceptionDetails) {
    result = { ok: false, error: r.exceptionDetails.exception?.description || r.exceptionDetails.text };
  } else {
    result = r.result.value;
  }
  if (rss) result = { ...result, ...rendererPeakRss(proc.pid) };
  const version = await cdp.send("Browser.getVersion");
  if (cpuProfile) {
    for (const [i, sid] of profiled.entries()) {
      try {
        const { profile } = await cdp.send("Profiler.stop", {}, sid);
        const file = i === 0 ? cpuProfile : `${cpuProfile}.${sessions.get(sid).replace(" ", "-")}`;
        writeFileSync(file, JSON.stringify(profile));
        console.error(`driver: ${sessions.get(sid)}'s CPU profile in ${file}`);
      } catch (e) {
        console.error(`driver: no CPU profile of ${sessions.get(sid)}: ${e.message}`);
      }
    }
  }
  clearTimeout(timer);
  console.log(JSON.stringify({ browser: version.product, url, ...result }));
  await stopChromium();
  process.exit(result && result.ok === true ? 0 : 1);
}

main().catch(async (e) => {
  console.error(`driver error: ${e.stack || e}`);
  if (stopChromium) await stopChromium();
  process.exit(4);
});
