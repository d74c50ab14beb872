#!/usr/bin/env node
// The kernel suite in Node: node web/kernels/node.mjs [test|bench] [reps] [zk_blocks]
// Prints the result as JSON on stdout; exits 1 if a self-test failed.
import { readFileSync } from "node:fs";
import { runSuite } from "./suite.mjs";

const [mode = "test", reps = "5", zk = "64"] = process.argv.slice(2);
const load = (flavour) =>
  readFileSync(new URL(`./pkg/${flavour}/webproof_wasm_kernels_bench_bg.wasm`, import.meta.url));
const r = await runSuite({ mode, reps: Number(reps), zkBlocks: Number(zk), load, log: console.error });
console.log(JSON.stringify({ engine: `node ${process.version}`, ...r }));
process.exit(r.ok ? 0 : 1);
