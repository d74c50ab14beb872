// Checking a presentation (what `webproof present` writes) against the
// verifier keys you trust, in a page or in Node: the check `webproof
// verify` makes, by the same Rust code compiled into a small module of its own.
// It runs on the calling thread: a presentation checks in milliseconds.

/** Why {@link verify} refused a presentation. */
export type VerifyErrorKind =
  /** Not a presentation this version reads (not JSON or binary of one, wrong format or version). */
  | "malformed"
  /** A trusted key does not parse, or none was given. */
  | "invalid-key"
  /** Signed by a key that is not among the trusted ones. */
  | "untrusted-key"
  /** The signature does not cover the attestation as given: it was altered. */
  | "bad-signature"
  /** Revealed data the signed commitment does not hold: altered, or out of bounds. */
  | "bad-opening"
  /** Older than `maxAgeSeconds` (or dated in the future beyond it). */
  | "expired"
  /** The module could not be loaded here. */
  | "engine";

/** How {@link verify} throws. */
export class VerifyError extends Error {
  readonly kind: VerifyErrorKind;
  readonly detail: string;
  constructor(kind: VerifyErrorKind, detail: string) {
    super(`${kind}: ${detail}`);
    this.name = "VerifyError";
    this.kind = kind;
    this.detail = detail;
  }
}

/** A byte range `[start, end)` of one direction. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A revealed run of bytes. */
export interface RevealedRun extends ByteRange {
  /** The bytes in hex. */
  hex: string;
  /** The bytes as text, or null if they are not UTF-8. */
  text: string | null;
}

/** One direction of the session as the presentation proves it. */
export interface RevealedData {
  /** Bytes in this direction. */
  len: number;
  revealedLen: number;
  hiddenLen: number;
  /** The revealed runs with their bytes. */
  revealed: RevealedRun[];
  /** The hidden runs: what was withheld. */
  hidden: ByteRange[];
  /**
   * The whole direction as text, each hidden byte as █; revealed text is
   * escaped so that a █ always means hidden (`\\` a backslash, `\u{2588}`
   * a revealed █, lossy UTF-8).
   */
  text: string;
}

/** What a valid presentation proves. */
export interface VerifiedPresentation {
  /** The server's DNS name (its certificate was checked for it). */
  serverName: string;
  /** The session's time, ISO 8601 in UTC (`2026-12-06T12:48:34Z`). */
  time: string;
  /** The same, Unix seconds. */
  unixTime: number;
  /** `proxy` (the verifier relayed the connection) or `mpc` (it was half of the TLS client). */
  mode: "proxy" | "mpc";
  /** The mode in words. */
  modeDescription: string;
  tlsVersion: string;
  cipherSuite: string;
  /** The id of the trusted key that signed the attestation. */
  keyId: string;
  /** That key (`ed25519:HEX` or `secp256k1:HEX`). */
  verifierKey: string;
  /** For secp256k1 keys, the verifier's Ethereum address. */
  ethereumAddress: string | null;
  /** What the prover sent (the request). */
  sent: RevealedData;
  /** What the server sent (the response). */
  received: RevealedData;
  /** How the response ended, as the signed facts show. */
  responseEnd: string;
  /** True when the server may have sent more than the transcript holds. */
  possiblyTruncated: boolean;
  /** Certificates included (checked against the attested handshake), or null. */
  certificates: number | null;
  /** The signed session facts as `webproof verify --json` prints them. */
  facts: Record<string, unknown>;
}

/** Options of {@link verify}. */
export interface VerifyOptions {
  /** Refuse (kind `expired`) a session older than this many seconds. */
  maxAgeSeconds?: number;
  /** The time to judge `maxAgeSeconds` by (default: now). */
  now?: Date;
}

// The check's own module (crates/browser-verify), not the prover's: a page
// or a backend that only verifies loads a fraction of the bytes.
type Glue = typeof import("../wasm/webproof_browser_verify.js");
let glue: Promise<Glue> | null = null;

/** The module's glue, instantiated once (shared with a proof on the page). */
function engine(): Promise<Glue> {
  glue ??= (async () => {
    const g = await import("../wasm/webproof_browser_verify.js");
    const url = new URL("../wasm/webproof_browser_verify_bg.wasm", import.meta.url);
    if (url.protocol === "file:") {
      // Node: no fetch of file URLs. A variable specifier, so that
      // bundlers for the web do not try to resolve it.
      const fs = "node:fs/promises";
      const { readFile } = await import(/* @vite-ignore */ fs);
      await g.default({ module_or_path: await readFile(url) });
    } else {
      await g.default({ module_or_path: url });
    }
    return g;
  })().catch((e: unknown) => {
    glue = null;
    throw new VerifyError("engine", `loading the module: ${String(e)}`);
  });
  return glue;
}

/**
 * Check `presentation` (the JSON `webproof present` writes, as text or
 * parsed, or its bytes, binary or JSON) against `trustedKeys` (verifier
 * public keys: `ed25519:HEX`, `secp256k1:HEX` or bare hex). Resolves to
 * what it proves; rejects with a {@link VerifyError}.
 */
export async function verify(
  presentation: string | Uint8Array | ArrayBuffer | object,
  trustedKeys: string | string[],
  options: VerifyOptions = {},
): Promise<VerifiedPresentation> {
  let bytes: Uint8Array;
  if (typeof presentation === "string") bytes = new TextEncoder().encode(presentation);
  else if (presentation instanceof Uint8Array) bytes = presentation;
  else if (presentation instanceof ArrayBuffer) bytes = new Uint8Array(presentation);
  else if (presentation !== null && typeof presentation === "object") {
    bytes = new TextEncoder().encode(JSON.stringify(presentation));
  } else throw new VerifyError("malformed", `expected a presentation, got ${typeof presentation}`);
  const keys = typeof trustedKeys === "string" ? [trustedKeys] : trustedKeys;
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string")) {
    throw new VerifyError("invalid-key", "trustedKeys must be a string or an array of strings");
  }
  const g = await engine();
  let raw: Record<string, unknown>;
  try {
    raw = g.verifyPresentation(bytes, keys);
  } catch (e) {
    const err = e as { kind?: string; detail?: string };
    if (typeof err?.kind === "string") throw new VerifyError(err.kind as VerifyErrorKind, err.detail ?? String(e));
    throw new VerifyError("engine", String(e));
  }
  const unixTime = raw.time as number;
  if (options.maxAgeSeconds !== undefined) {
    const now = (options.now ?? new Date()).getTime() / 1000;
    const age = now - unixTime;
    if (Math.abs(age) > options.maxAgeSeconds) {
      throw new VerifyError(
        "expired",
        `the session is ${Math.round(age)} s old (at ${isoTime(unixTime)}), more than maxAgeSeconds ${options.maxAgeSeconds}`,
      );
    }
  }
  return { ...raw, time: isoTime(unixTime), unixTime } as unknown as VerifiedPresentation;
}

/** Unix seconds as RFC 3339 in UTC, whole seconds (as the CLI prints them). */
function isoTime(secs: number): string {
  return new Date(secs * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}
