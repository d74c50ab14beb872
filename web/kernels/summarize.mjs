#!/usr/bin/env node
// Median figures over several benchmark outputs of scripts/browser-test.sh
// --bench (native, Node or chromium JSON, one file each), as a Markdown
// table: node web/kernels/summarize.mjs FILE...
import { readFileSync } from "node:fs";

const rows = new Map(); // "flavour|name" -> {unit, values by column}
const columns = [];
for (const file of process.argv.slice(2)) {
  const d = JSON.parse(readFileSync(file, "utf8"));
  const engine = d.browser ? "chromium" : d.engine ? "node" : "native";
  const runs = d.flavours ? Object.entries(d.flavours).map(([f, e]) => [f, e.bench]) : [["native", d]];
  for (const [flavour, bench] of runs) {
    const col = engine === "native" ? "native" : `${engine} ${flavour}`;
    if (!columns.includes(col)) columns.push(col);
    for (const r of bench.results) {
      const key = r.name;
      if (!rows.has(key)) rows.set(key, { unit: r.unit, cols: {} });
      (rows.get(key).cols[col] ||= []).push(r.value);
    }
  }
}
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const fmt = (x) => (x >= 100 ? x.toExponential(2) : x.toPrecision(3));
console.log(`| kernel | unit | ${columns.join(" | ")} |`);
console.log(`|---|---|${columns.map(() => "---").join("|")}|`);
for (const [name, { unit, cols }] of rows) {
  const cells = columns.map((c) => (cols[c] ? `${fmt(median(cols[c]))} (n=${cols[c].length})` : "–"));
  console.log(`| ${name} | ${unit} | ${cells.join(" | ")} |`);
}
