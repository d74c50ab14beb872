// The messages between the page (index.ts) and the engine's worker
// (worker.ts). Internal: not part of the package's API.

/** The options the engine itself reads (no functions, no signal: they cannot cross). */
export interface EngineOptions {
  verifier: string;
  url: string;
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  requests?: { path: string; method?: string; headers?: Record<string, string>; body?: string }[];
  reveal?: string | string[];
  attest?: boolean | { commitAt?: string[]; chunkLen?: number };
  ca?: string | string[];
  timeoutMs?: number;
  apiKey?: string;
  padding?: number;
  expectResponse?: number;
  tls?: "1.2" | "1.3" | "any";
  suite?: string | string[];
  yesRevealSecrets?: boolean;
  mode?: "proxy" | "mpc";
  relay?: string;
}

/** Who decided a failure: the verifier (a refusal or rejection), the server (its TLS or certificate), the network (a link failed or timed out) or this prover (its own check, proof or setup). */
export type DecidedBy = "verifier" | "server" | "network" | "prover";
const DECIDERS: readonly DecidedBy[] = ["verifier", "server", "network", "prover"];

/** Page to worker. */
export type ToWorker =
  | { type: "prove"; id: number; module: WebAssembly.Module; options: EngineOptions }
  | { type: "warm"; id: number; module: WebAssembly.Module; mpc: boolean }
  | { type: "cancel"; id: number };

/** A failure as it crosses from the worker (Errors lose their own fields in structured clone). */
export interface WireError {
  kind: string;
  detail: string;
  decidedBy: DecidedBy;
  message: string;
}

/** Worker to page. */
export type FromWorker =
  | { type: "progress"; id: number; phase: string }
  | { type: "result"; id: number; result: unknown }
  | { type: "warmed"; id: number; ms: number }
  | { type: "error"; id: number; error: WireError; broken: boolean };

/** A thrown value from the engine as a WireError; `broken` if the engine trapped (a panic) rather than rejecting. */
export function toWire(e: unknown, lastPanic: () => string | undefined): { error: WireError; broken: boolean } {
  const o = (typeof e === "object" && e !== null ? e : {}) as Record<string, unknown>;
  if (typeof o.kind === "string") {
    return {
      error: {
        kind: o.kind,
        detail: String(o.detail ?? ""),
        decidedBy: DECIDERS.includes(o.decidedBy as DecidedBy) ? (o.decidedBy as DecidedBy) : "prover",
        message: String(o.message ?? o.kind),
      },
      broken: false,
    };
  }
  let panic: string | undefined;
  try {
    panic = lastPanic();
  } catch {
    // The module never loaded.
  }
  const detail = panic ? `the engine panicked: ${panic}` : `the engine failed: ${String(e)}`;
  return { error: { kind: "engine", detail, decidedBy: "prover", message: detail }, broken: true };
}
