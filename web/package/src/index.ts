// webproof in a web page: prove to a verifier what an HTTPS server sent,
// revealing only what you choose.
//
//   import { prove, ProveError } from "webproof";
//   const ac = new AbortController();
//   const { verified, stats } = await prove({
//     verifier: "wss://verifier.example/v1/session",
//     url: "https://api.example/account",
//     reveal: ["json:name"],
//     signal: ac.signal,
//     onProgress: ({ phase, elapsedMs }) => console.log(phase, elapsedMs),
//   });
//
// The engine (WebAssembly, crates/browser) runs in a dedicated module
// worker, so the page stays responsive and no cross-origin isolation is
// needed; the compiled module is shared by the workers, and an idle
// worker is kept for the next proof.

import type { DecidedBy, EngineOptions, FromWorker, WireError } from "./messages.js";
import { toWire } from "./messages.js";
import type { ErrorKind, Phase, ProveOptions, ProveResult, Stats } from "./types.js";
export { verify, VerifyError } from "./verify.js";
export type {
  ByteRange,
  RevealedData,
  RevealedRun,
  VerifiedPresentation,
  VerifyErrorKind,
  VerifyOptions,
} from "./verify.js";

export type {
  Disclosed,
  ErrorKind,
  Hidden,
  NextRequest,
  Phase,
  ProgressEvent,
  ProveOptions,
  ProveResult,
  Range,
  Stats,
  Verified,
} from "./types.js";

/** How `prove` rejects: `kind` says why (see {@link ErrorKind}), `detail` the particulars, `decidedBy` who decided. */
export class ProveError extends Error {
  /** The reason code. */
  readonly kind: ErrorKind;
  /** What happened, for people. */
  readonly detail: string;
  /** `verifier` when the verifier refused or rejected, else `prover` (this page's own check, or a failure). */
  readonly decidedBy: DecidedBy;

  constructor(kind: ErrorKind, detail: string, decidedBy: DecidedBy = "prover", message?: string) {
    super(message ?? `${kind}: ${detail}`);
    this.name = "ProveError";
    this.kind = kind;
    this.detail = detail;
    this.decidedBy = decidedBy;
  }
}

/** How long a cancelled worker may take to stop its proof before it is terminated. */
const CANCEL_GRACE_MS = 1500;
/** How long past `timeoutMs` the page waits for the engine's own timeout before terminating it. */
const TIMEOUT_GRACE_MS = 3000;
/** Idle workers kept for later proofs. */
const KEEP_IDLE = 1;

const wasmUrl = new URL("../wasm/webproof_browser_bg.wasm", import.meta.url);
let compiled: Promise<WebAssembly.Module> | null = null;

/** The engine's module, compiled once per page (workers get it by message). */
function engineModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    try {
      return await WebAssembly.compileStreaming(fetch(wasmUrl));
    } catch {
      // Served without `application/wasm`, or no streaming compile here.
      const res = await fetch(wasmUrl);
      if (!res.ok) throw new Error(`fetching ${wasmUrl}: HTTP ${res.status}`);
      return WebAssembly.compile(await res.arrayBuffer());
    }
  })().catch((e: unknown) => {
    compiled = null;
    throw new ProveError("worker", `loading the engine: ${String(e)}`);
  });
  return compiled;
}

const idle: Worker[] = [];
let nextId = 1;

function startWorker(): Worker {
  return new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "webproof engine" });
}

/** What {@link preload} prepares for. */
export interface PreloadOptions {
  /**
   * The mode the page will prove in (default `"proxy"`). `"mpc"` also
   * builds MPC mode's key-derivation plans in the worker (a few hundred
   * milliseconds more of warm-up, kept for every MPC proof), which the
   * first MPC proof would otherwise build while its preprocessing runs.
   */
  mode?: "proxy" | "mpc";
}

/** What {@link preload} did. */
export interface Preloaded {
  /** Milliseconds of the engine's warm-up in its worker (the proof in memory), 0 if a warm worker was already idle. */
  warmMs: number;
}

let preloading: Promise<Preloaded> | null = null;

/**
 * Load the engine before the first `prove`: compile the module, start a
 * worker, instantiate the module there and run the engine once on a
 * synthetic session in memory (its warm-up, a few hundred milliseconds),
 * so the browser has optimised the hot code before the first proof and
 * this browser's kernels are known to prove correctly; with `{ mode:
 * "mpc" }` it also builds MPC mode's key-derivation plans. The first call
 * decides: a later one returns the same warm-up. Rejects with a
 * {@link ProveError} (kind `engine` or `worker`) if the engine cannot run
 * here. Call it when the page loads; a `prove` called meanwhile waits for
 * it.
 */
export function preload(options: PreloadOptions = {}): Promise<Preloaded> {
  const mpc = options.mode === "mpc";
  preloading ??= (async () => {
    const module = await engineModule();
    if (idle.length > 0) return { warmMs: 0 };
    const worker = startWorker();
    let warmMs: number;
    try {
      warmMs = await warmWorker(worker, module, mpc);
    } catch (e) {
      worker.terminate();
      throw e;
    }
    idle.push(worker);
    return { warmMs };
  })().catch((e: unknown) => {
    preloading = null;
    throw e;
  });
  return preloading;
}

/** Instantiate the engine in `worker` and run its warm-up there (with MPC mode's plans if `mpc`). */
function warmWorker(worker: Worker, module: WebAssembly.Module, mpc: boolean): Promise<number> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const done = () => {
      worker.removeEventListener("message", onMessage);
      worker.removeEventListener("error", onError);
    };
    const onMessage = (event: MessageEvent<FromWorker>) => {
      const m = event.data;
      if (m.id !== id) return;
      done();
      if (m.type === "warmed") resolve(m.ms);
      else if (m.type === "error") reject(fromWire(m.error));
    };
    const onError = (e: Event) => {
      e.preventDefault();
      done();
      reject(workerFailed(e));
    };
    worker.addEventListener("message", onMessage);
    worker.addEventListener("error", onError);
    worker.postMessage({ type: "warm", id, module, mpc });
  });
}

const cancelled = () => new ProveError("cancelled", "cancelled by the page");
/** A worker's `error` event as the failure it reports. */
function workerFailed(e: Event): ProveError {
  const why = e instanceof ErrorEvent && e.message ? e.message : "it could not be loaded or crashed";
  return new ProveError("worker", `the engine's worker failed: ${why}`);
}
const fromWire = (e: WireError) => new ProveError(e.kind, e.detail, e.decidedBy, e.message);

/**
 * Fetch `options.url` through the verifier and prove what the server sent.
 * Resolves to what the verifier saw and attests ({@link ProveResult});
 * rejects with a {@link ProveError}.
 */
export async function prove(options: ProveOptions): Promise<ProveResult> {
  const t0 = performance.now();
  const { signal, onProgress, engine = "worker", ...engineOptions } = options;
  const progress = (phase: string) => {
    try {
      onProgress?.({ phase: phase as Phase, elapsedMs: performance.now() - t0 });
    } catch (e) {
      // A failing listener must not fail the proof.
      console.error("webproof: onProgress threw", e);
    }
  };
  if (typeof options.verifier !== "string" || typeof options.url !== "string") {
    throw new ProveError("setup", "options.verifier and options.url must be strings");
  }
  if (engine !== "worker" && engine !== "page") throw new ProveError("setup", `unknown engine ${String(engine)}`);
  if (signal?.aborted) throw cancelled();
  progress("starting");
  // A preload under way has a warm worker almost ready: wait for it
  // rather than start a second engine beside it (its failure is this
  // proof's own to find).
  await preloading?.catch(() => undefined);
  const module = await engineModule();
  if (signal?.aborted) throw cancelled();
  const run = engine === "page" ? onPage : inWorker;
  const result = (await run(module, engineOptions, progress, signal)) as ProveResult;
  const stats = result.stats as Stats;
  stats.wall_ms = performance.now() - t0;
  stats.engine = engine;
  return result;
}

/** One proof in a worker: progress relayed, cancel and timeout enforced even if the worker is busy. */
function inWorker(
  module: WebAssembly.Module,
  options: EngineOptions,
  progress: (phase: string) => void,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const worker = idle.pop() ?? startWorker();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    let settled = false;
    const timers: ReturnType<typeof setTimeout>[] = [];
    const finish = (keep: boolean) => {
      settled = true;
      timers.forEach(clearTimeout);
      worker.removeEventListener("message", onMessage);
      worker.removeEventListener("error", onError);
      worker.removeEventListener("messageerror", onError);
      signal?.removeEventListener("abort", onAbort);
      if (keep && idle.length < KEEP_IDLE) idle.push(worker);
      else worker.terminate(); // closes its WebSocket, if it had one open
    };
    const give = (keep: boolean, e: ProveError) => {
      if (settled) return;
      finish(keep);
      reject(e);
    };
    const onMessage = (event: MessageEvent<FromWorker>) => {
      const m = event.data;
      if (m.id !== id || settled) return;
      if (m.type === "progress") progress(m.phase);
      else if (m.type === "result") {
        finish(true);
        resolve(m.result);
      } else if (m.type === "error") give(!m.broken, fromWire(m.error));
    };
    const onError = (e: Event) => {
      e.preventDefault();
      give(false, workerFailed(e));
    };
    const onAbort = () => {
      worker.postMessage({ type: "cancel", id });
      // A worker in the middle of a long computation reads the cancel
      // only when it next yields: terminate it if it has not stopped soon.
      timers.push(setTimeout(() => give(false, cancelled()), CANCEL_GRACE_MS));
    };
    worker.addEventListener("message", onMessage);
    worker.addEventListener("error", onError);
    worker.addEventListener("messageerror", onError);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (options.timeoutMs !== undefined) {
      const ms = options.timeoutMs;
      timers.push(setTimeout(() => give(false, new ProveError("timeout", `no verdict after ${ms} ms`)), ms + TIMEOUT_GRACE_MS));
    }
    worker.postMessage({ type: "prove", id, module, options });
  });
}

type Glue = typeof import("../wasm/webproof_browser.js");
let pageEngine: Promise<Glue> | null = null;

/** One proof on the calling thread (the page is busy while the engine computes). */
async function onPage(
  module: WebAssembly.Module,
  options: EngineOptions,
  progress: (phase: string) => void,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  pageEngine ??= (async () => {
    const glue = await import("../wasm/webproof_browser.js");
    await glue.default({ module_or_path: module });
    return glue;
  })();
  const glue = await pageEngine.catch((e: unknown) => {
    pageEngine = null;
    throw new ProveError("worker", `loading the engine: ${String(e)}`);
  });
  try {
    return await glue.prove(options, progress, signal ?? null);
  } catch (e) {
    throw fromWire(toWire(e, glue.lastPanic).error);
  }
}
