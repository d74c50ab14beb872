// The checks of the package's `verify`, shared by the Node test
// (verify.node.mjs) and the chromium page (verify.html): `cases` holds a
// presentation `webproof present` made of a real session with the fixture
// server, the key of the verifier that signed it, another key, what
// `webproof verify --json` printed for it, and the body the fixture serves.

const hexOf = (runs) => runs.map((r) => r.hex).join("");

function check(cond, what) {
  if (!cond) throw new Error(`verify test: ${what}`);
}

/** Runs `f`, which must reject with a VerifyError of `kind`. */
async function refused(api, kind, what, f) {
  try {
    await f();
  } catch (e) {
    check(e instanceof api.VerifyError, `${what}: not a VerifyError: ${e}`);
    check(e.kind === kind, `${what}: kind ${e.kind}, expected ${kind} (${e.detail})`);
    return `${what}: refused, kind ${e.kind} (${e.detail})`;
  }
  throw new Error(`verify test: ${what}: accepted`);
}

/** Returns one line per check passed; throws on the first failure. */
export async function runCases(api, cases) {
  const { verify } = api;
  const { presentation, key, otherKey, expected, bodyHex } = cases;
  const lines = [];

  const v = await verify(presentation, [key]);
  check(v.serverName === expected.server_name, `server name ${v.serverName}`);
  check(v.time === expected.time_utc && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(v.time), `time ${v.time}`);
  check(v.unixTime === expected.time, `unix time ${v.unixTime}`);
  check(v.keyId === expected.verifier_key_id, `key id ${v.keyId}`);
  check(v.verifierKey === expected.verifier_key, `verifier key ${v.verifierKey}`);
  check(v.mode === "proxy" && v.modeDescription.startsWith("proxy mode"), `mode ${v.mode}: ${v.modeDescription}`);
  // In words here ("TLS 1.3"); the CLI's JSON has the number ("1.3").
  check(v.tlsVersion === `TLS ${expected.tls_version}`, `TLS version ${v.tlsVersion} (${expected.tls_version})`);
  check(v.cipherSuite === expected.cipher_suite, `suite ${v.cipherSuite} (${expected.cipher_suite})`);
  // Received: what the CLI's verifier shows revealed, ending with the body
  // the fixture serves.
  const cliRevealed = expected.received.segments.filter((s) => !s.hidden).map((s) => s.hex).join("");
  check(hexOf(v.received.revealed) === cliRevealed, "received revealed bytes differ from webproof verify's");
  check(cliRevealed.endsWith(bodyHex) && bodyHex.length > 0, "the revealed bytes do not end with the fixture's body");
  check(v.received.revealedLen === expected.received.revealed_len, `received revealedLen ${v.received.revealedLen}`);
  check(v.received.hiddenLen === expected.received.len - expected.received.revealed_len, "received hiddenLen");
  // Hidden runs as the CLI shows them, in both directions; the text
  // marks each hidden byte.
  for (const dir of ["sent", "received"]) {
    const runs = (list) => JSON.stringify(list.map(({ start, end }) => [start, end]));
    const want = expected[dir].segments.filter((x) => x.hidden);
    check(runs(v[dir].hidden) === runs(want), `${dir} hidden ${runs(v[dir].hidden)}, webproof verify: ${runs(want)}`);
    check(v[dir].revealedLen === expected[dir].revealed_len && v[dir].len === expected[dir].len, `${dir} lengths`);
    check([...v[dir].text].filter((c) => c === "\u2588").length === v[dir].hiddenLen, `${dir} text marks ${v[dir].hiddenLen} hidden bytes`);
  }
  check(v.received.hiddenLen > 0, "the response headers are hidden");
  check(v.possiblyTruncated === expected.possibly_truncated, "possiblyTruncated");
  lines.push(`valid: ${v.serverName} at ${v.time}, ${v.mode}, key ${v.keyId}, received ${v.received.revealedLen}/${v.received.len} B revealed, sent ${v.sent.revealedLen}/${v.sent.len} B revealed`);

  // The same presentation parsed, as bytes, and with the key among others.
  const parsed = JSON.parse(presentation);
  check((await verify(parsed, key)).keyId === v.keyId, "parsed object");
  check((await verify(new TextEncoder().encode(presentation), [otherKey, key])).keyId === v.keyId, "bytes, two keys");
  lines.push("valid as object, as bytes, with an untrusted key beside the trusted one");

  lines.push(await refused(api, "untrusted-key", "untrusted key", () => verify(presentation, [otherKey])));
  lines.push(await refused(api, "invalid-key", "unparsable key", () => verify(presentation, ["ed25519:zz"])));
  lines.push(await refused(api, "invalid-key", "no key", () => verify(presentation, [])));
  lines.push(await refused(api, "malformed", "not JSON", () => verify("not a presentation", [key])));
  lines.push(await refused(api, "malformed", "another JSON object", () => verify({ format: "x" }, [key])));

  // One revealed byte changed: the commitment the verifier signed does
  // not hold it.
  const opened = structuredClone(parsed);
  const o = opened.openings.find((x) => x.direction === "received");
  check(o && /^[0-9a-f]+$/.test(o.plaintext), "an opening of the response");
  const last = o.plaintext.slice(-2);
  o.plaintext = o.plaintext.slice(0, -2) + (last === "7d" ? "5d" : "7d");
  lines.push(await refused(api, "bad-opening", "revealed byte changed", () => verify(JSON.stringify(opened), [key])));

  // The signed server name changed.
  const renamed = JSON.stringify(parsed).replaceAll(JSON.stringify(v.serverName), JSON.stringify(`evil.${v.serverName}`));
  check(renamed !== JSON.stringify(parsed), "the server name appears in the JSON");
  lines.push(await refused(api, "bad-signature", "server name changed", () => verify(renamed, [key])));

  // Age: a day later with maxAgeSeconds of an hour, then within it.
  const at = (s) => new Date((v.unixTime + s) * 1000);
  lines.push(await refused(api, "expired", "a day old, maxAgeSeconds 3600", () => verify(presentation, key, { maxAgeSeconds: 3600, now: at(86400) })));
  check((await verify(presentation, key, { maxAgeSeconds: 3600, now: at(60) })).time === v.time, "within maxAgeSeconds");
  lines.push("within maxAgeSeconds: accepted");
  return lines;
}
