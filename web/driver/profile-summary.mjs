#!/usr/bin/env node
// Where the time went in DevTools CPU profiles (web/driver/chromium.mjs
// --cpu-profile): per function, self time (the sampled frame itself) and
// total time (the function anywhere on the stack, counted once per
// sample), over all files given, busiest first; idle and GC lines kept.
//
//   node web/driver/profile-summary.mjs [--top N] [--match REGEX] FILE...
//
// wasm frames carry the module's name section (wasm-bindgen keeps it,
// demangled), so Rust paths show as written; generic parameters and
// closure suffixes are trimmed so instances of one function add up.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
let top = 40;
let match = null;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--top") top = Number(args[++i]);
  else if (args[i] === "--match") match = new RegExp(args[++i]);
  else files.push(args[i]);
}

const name = (cf) => {
  let n = cf.functionName || "(anonymous)";
  // `<T as Trait>::f` and `f::<T>` instances, `{{closure}}`s: one row.
  n = n.replace(/::h[0-9a-f]{16}$/, "").replace(/\{\{closure\}\}/g, "{closure}");
  if (!cf.functionName && cf.url) n += ` ${cf.url.split("/").pop()}:${cf.lineNumber}`;
  return n;
};

const self = new Map();
const total = new Map();
let allUs = 0;
for (const file of files) {
  const p = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
  // Per node: its name and the distinct names on its stack (memoised).
  const stacks = new Map();
  const stackOf = (id) => {
    if (stacks.has(id)) return stacks.get(id);
    const up = parent.has(id) ? stackOf(parent.get(id)) : new Set();
    const s = new Set(up);
    s.add(name(byId.get(id).callFrame));
    stacks.set(id, s);
    return s;
  };
  for (let i = 0; i < p.samples.length; i++) {
    // timeDeltas[i] is the gap before sample i: charge it to sample i - 1's frame.
    const dt = p.timeDeltas[i + 1] ?? 0;
    const id = p.samples[i];
    allUs += dt;
    const n = name(byId.get(id).callFrame);
    self.set(n, (self.get(n) || 0) + dt);
    for (const f of stackOf(id)) total.set(f, (total.get(f) || 0) + dt);
  }
}

const ms = (us) => (us / 1000).toFixed(1).padStart(9);
const pct = (us) => ((100 * us) / allUs).toFixed(1).padStart(5);
const table = (title, m) => {
  console.log(`\n${title} (of ${(allUs / 1000).toFixed(0)} ms sampled)`);
  console.log(`${"ms".padStart(9)} ${"%".padStart(5)}  function`);
  [...m]
    .filter(([n]) => !match || match.test(n))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .forEach(([n, us]) => console.log(`${ms(us)} ${pct(us)}  ${n.slice(0, 160)}`));
};
table("self time", self);
table("total time", total);
