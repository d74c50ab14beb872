// The package's public types: what `prove` takes, reports and returns.

/** The steps of a proof, in order, as `onProgress` hears them. */
export type Phase =
  /** The engine is loading (the worker starts, the module compiles). */
  | "starting"
  /** Opening the WebSocket to the verifier and sending the hello. */
  | "connecting"
  /** Oblivious-transfer setup with the verifier, before the server is contacted. */
  | "preprocessing"
  /** The TLS session with the server, relayed and recorded by the verifier. */
  | "tls"
  /** The zero-knowledge proof that the records decrypt to what is revealed. */
  | "proving"
  /** Waiting for the verifier's verdict. */
  | "verdict"
  /** Verified. */
  | "done";

/** One progress event. */
export interface ProgressEvent {
  phase: Phase;
  /** Milliseconds since `prove` was called. */
  elapsedMs: number;
}

/** What to prove and how. */
export interface ProveOptions {
  /** The verifier's WebSocket endpoint: `ws://host:port/v1/session` or `wss://…`. */
  verifier: string;
  /** `https://host[:port]/path` to fetch through the verifier (GET). */
  url: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /**
   * What the verifier may see, as `webproof prove --reveal`: by default
   * the whole request except its credentials (the values of headers such
   * as `Cookie`, `Authorization`, `X-Api-Key`, and the query string) and
   * the whole response; or `all` (credentials included), `none`, `http`,
   * `headers`, `header:NAME`, `body`, `json:PATH`, `sent:A-B`, `recv:A-B`,
   * `secret-header:NAME` (hide that header's value too), … Everything else
   * stays hidden (proven in zero knowledge). `all` (or a `sent:` range)
   * over a request carrying credentials rejects with kind `setup`, before
   * any network work, unless `yesRevealSecrets` is set.
   */
  reveal?: string | string[];
  /**
   * Let `reveal` show the verifier the request's credentials without
   * naming them (`webproof prove --yes-reveal-secrets`).
   */
  yesRevealSecrets?: boolean;
  /**
   * Ask the verifier to sign an attestation over a commitment to the whole
   * transcript: `true`, or the reveal items that get leaves of their own
   * (so a later presentation can reveal exactly them) and the leaf size.
   */
  attest?: boolean | { commitAt?: string[]; chunkLen?: number };
  /** Extra trusted root certificates (PEM), for test servers. */
  ca?: string | string[];
  /** Give up after this many milliseconds (rejects with kind `timeout`; the service ends the session). */
  timeoutMs?: number;
  /** Cancels the proof (rejects with kind `cancelled`; the WebSocket closes, which ends the session on the service). */
  signal?: AbortSignal;
  /** Hears each phase as it starts. */
  onProgress?: (event: ProgressEvent) => void;
  /** API key for verifiers that require one. */
  apiKey?: string;
  /** Bytes of `X-Padding` request header to add (benchmarks' request sizes). */
  padding?: number;
  /** The request method, upper case (default `GET`, or `POST` when a body is given). */
  method?: string;
  /** The request body (UTF-8), sent with its `Content-Length`. */
  body?: string;
  /**
   * Further requests on the same TLS connection, after the one `url`,
   * `method`, `headers` and `body` describe (at most 32 requests in all).
   * In proxy mode each goes once the response before it is complete; in
   * MPC mode all go in one flight (HTTP/1.1 pipelining: the page cannot
   * read a response before the session ends) and the responses are read
   * until the server closes. Only the last asks for `Connection: close`. Reveal items
   * apply to every exchange; prefix one with `N/` for exchange N only
   * (`2/json:data.id`). `verified.received` holds every response in order.
   */
  requests?: NextRequest[];
  /** Response size expected, in bytes (sizes the preprocessing; default 8192). */
  expectResponse?: number;
  /**
   * The TLS version to offer, as `webproof prove --tls`: `1.2`, `1.3` or
   * `any` (the default: 1.3 or 1.2, as the server prefers). Another value
   * rejects with kind `setup`.
   */
  tls?: "1.2" | "1.3" | "any";
  /**
   * Cipher suites to offer, as `webproof prove --suite` (e.g.
   * `TLS13_AES_128_GCM_SHA256`, `ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`;
   * default: all). An unknown name, or none of the version `tls` names,
   * rejects with kind `setup`.
   */
  suite?: string | string[];
  /**
   * `proxy` (the default: the verifier relays the TLS session and records
   * it) or `mpc`: the page reaches the server itself through `relay`, and
   * the verifier takes part in the TLS client in two-party computation and
   * never sees the traffic (TLS 1.2 with ECDHE and AES-GCM or
   * ChaCha20-Poly1305; TLS 1.3 with either when `tls` is `1.3`, or when
   * the server runs no TLS 1.2). A verifier that stops between the page's
   * `Close` and its audit rejects with kind `verifier_cheated`: do not use
   * it again.
   */
  mode?: "proxy" | "mpc";
  /**
   * MPC mode: a `webproof relay` endpoint that reaches the server
   * (`ws://HOST:PORT/tcp`, `wss://…`); a page cannot open TCP itself. It
   * sees only the TLS ciphertext.
   */
  relay?: string;
  /**
   * Where the engine runs: `worker` (default: a dedicated Web Worker, the
   * page stays responsive; needs no cross-origin isolation) or `page` (the
   * calling thread; for environments without module workers).
   */
  engine?: "worker" | "page";
}

/** A byte range `[start, end)`. */
export interface Range {
  start: number;
  end: number;
}

/** One direction of the application data as the verifier saw it. */
export interface Disclosed {
  /** Length in bytes. */
  len: number;
  /** The revealed ranges. */
  revealed: Range[];
  /** The bytes as text, hidden bytes shown as █. */
  text: string;
  /** The bytes in hex, hidden bytes zero. */
  bytes: string;
}

/** The verifier's output: what it attests about the session (`webproof prove --json`'s `verified`). */
export interface Verified {
  server_name: string;
  server_port: number;
  /** Unix seconds of the session. */
  time: number;
  tls_version: string;
  cipher_suite: string;
  key_exchange_group: string;
  /** `zk`: records proven in zero knowledge; `full-reveal`: every byte revealed, keys disclosed. */
  proof: "zk" | "full-reveal";
  /** What the prover sent (the request). */
  sent: Disclosed;
  /** What the server sent (the response). */
  received: Disclosed;
  [more: string]: unknown;
}

/** Timings (ms) and traffic (bytes) of one proof. */
export interface Stats {
  /** Setup before the server connection (hello, OT bootstrap). */
  time_preprocess_ms: number;
  /** From the server connection to the verdict. */
  time_online_ms: number;
  /** The engine's whole proof. */
  time_total_ms: number;
  /** The TLS session (relay phase). */
  time_tls_ms: number;
  /** The proof phase to the verdict. */
  time_proof_ms: number;
  uploaded_preprocess: number;
  downloaded_preprocess: number;
  uploaded_online: number;
  downloaded_online: number;
  /** The wasm module's linear memory after the proof (its peak so far). */
  wasm_memory_bytes: number;
  /** From `prove` to the result on the calling page, engine start included. */
  wall_ms: number;
  /** Where the engine ran. */
  engine: "worker" | "page";
}

/** A verified proof. */
export interface ProveResult {
  verified: Verified;
  stats: Stats;
  /**
   * The attestation bundle (the JSON `webproof prove --attest FILE` writes,
   * which `webproof present` reads) if `attest` asked for one, else null.
   * It holds the commitment's secret seed: keep it private.
   */
  attestation: Record<string, unknown> | null;
  /** What the verifier did not get (`webproof prove` prints it as `hidden: …`). */
  hidden: Hidden;
}

/** What was withheld from the verifier. */
export interface Hidden {
  /** The request's credentials it did not see (`Cookie value`, `query string`, …). */
  secrets: string[];
  /** Credentials it did see, because `reveal` asked for them. */
  revealed_secrets: string[];
  /** Hidden bytes of the request. */
  sent_bytes: number;
  /** Hidden bytes of the response. */
  received_bytes: number;
}

/**
 * Why a proof failed. The verifier's reasons keep their wire names
 * (`unauthorized`, `certificate`, `unreachable`, `forbidden`, `limit`,
 * `timeout`, …); the prover's own: `setup` (bad options), `tls` (the TLS
 * session with the server failed), `disconnected` (the verifier is not
 * there, closed the link or broke the protocol), `engine` (the proof
 * engine failed), `cancelled` (the signal aborted), `timeout` (`timeoutMs`
 * passed), `worker` (the engine could not be loaded or crashed).
 */
export type ErrorKind =
  | "setup"
  | "tls"
  | "disconnected"
  | "engine"
  | "cancelled"
  | "timeout"
  | "worker"
  | "unauthorized"
  | "certificate"
  | "unreachable"
  | "forbidden"
  | "unavailable"
  | "limit"
  | "mpc"
  | "verifier_cheated"
  | (string & {});

/** A request after the first, to the same server (see `ProveOptions.requests`). */
export interface NextRequest {
  /** Request target: path and query, e.g. `/api/items?page=2`. */
  path: string;
  /** Upper case (default `GET`, or `POST` when a body is given). */
  method?: string;
  headers?: Record<string, string>;
  /** UTF-8, sent with its `Content-Length`. */
  body?: string;
}
