// The package's `verify` in Node, imported as an application would from
// the package installed from its tarball: node verify.node.mjs CASES.json
import { readFileSync } from "node:fs";
import { verify, VerifyError } from "webproof";
import { runCases } from "./verify-cases.mjs";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
for (const line of await runCases({ verify, VerifyError }, cases)) console.log(`node: ${line}`);
