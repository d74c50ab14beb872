// The kernel suite for one JavaScript engine: loads the wasm-bindgen
// output of crates/wasm-kernels-bench in both flavours (portable and
// SIMD128), runs the self-tests and, with mode "bench", the benchmarks.
// Shared by the page (index.html) and Node (node.mjs); `load(flavour)`
// returns what wasm-bindgen's init accepts (a URL or the module's bytes).

export const FLAVOURS = ["portable", "simd128"];

export async function runSuite({ mode = "test", reps = 5, zkBlocks = 64, load, log = console.log }) {
  const out = { ok: true, mode, flavours: {} };
  for (const flavour of FLAVOURS) {
    const m = await import(`./pkg/${flavour}/webproof_wasm_kernels_bench.js`);
    await m.default({ module_or_path: await load(flavour) });
    if (m.simd128() !== (flavour === "simd128")) throw new Error(`${flavour}: built with the wrong features`);
    const tests = JSON.parse(m.run_tests());
    out.ok &&= tests.ok;
    const entry = { tests };
    log(`${flavour}: tests ${tests.ok ? "ok" : "FAILED " + JSON.stringify(tests.checks)}`);
    if (mode === "bench") {
      entry.bench = JSON.parse(m.run_bench(reps, zkBlocks));
      for (const r of entry.bench.results) log(`${flavour}: ${r.name} ${r.value.toPrecision(4)} ${r.unit}`);
    }
    out.flavours[flavour] = entry;
  }
  return out;
}
