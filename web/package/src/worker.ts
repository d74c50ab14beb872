// The engine's dedicated worker: one proof at a time, the module
// instantiated once (compiled by the page and posted with each job), the
// page told of every phase; `warm` instantiates it and runs the
// engine's warm-up (a proof in memory) before the first proof, and with
// `mpc` builds MPC mode's key-derivation plans too. A
// `cancel` aborts the running proof: the engine drops it, which closes
// the WebSocket and so ends the session on the service.

import init, { lastPanic, prove, warm, warmMpc } from "../wasm/webproof_browser.js";
import { toWire, type FromWorker, type ToWorker } from "./messages.js";

/** What this file needs of DedicatedWorkerGlobalScope (the DOM lib has no worker types). */
interface WorkerScope {
  postMessage(message: FromWorker): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}
const scope = self as unknown as WorkerScope;

let instance: Promise<unknown> | null = null;
const running = new Map<number, AbortController>();

scope.onmessage = (event) => {
  const m = event.data;
  if (m.type === "cancel") {
    running.get(m.id)?.abort();
    return;
  }
  if (m.type === "warm") {
    void warmUp(m);
    return;
  }
  void run(m);
};

async function warmUp(m: Extract<ToWorker, { type: "warm" }>): Promise<void> {
  try {
    instance ??= init({ module_or_path: m.module });
    await instance;
    const ms = warm() + (m.mpc ? warmMpc() : 0);
    scope.postMessage({ type: "warmed", id: m.id, ms });
  } catch (e) {
    const { error, broken } = toWire(e, lastPanic);
    scope.postMessage({ type: "error", id: m.id, error, broken });
  }
}

async function run(m: Extract<ToWorker, { type: "prove" }>): Promise<void> {
  const job = new AbortController();
  running.set(m.id, job);
  try {
    instance ??= init({ module_or_path: m.module });
    await instance;
    const result = await prove(
      m.options,
      (phase) => scope.postMessage({ type: "progress", id: m.id, phase }),
      job.signal,
    );
    scope.postMessage({ type: "result", id: m.id, result });
  } catch (e) {
    const { error, broken } = toWire(e, lastPanic);
    scope.postMessage({ type: "error", id: m.id, error, broken });
  } finally {
    running.delete(m.id);
  }
}
