// Every conformance scenario that runs on disk, through the Node API
// (R-NODE-6): each step's expectations checked here, and each step's
// observations compared with the Rust runner's (DSH_CONFORMANCE_RUST, the
// JSON `cargo xtask conformance-node` writes). Run by that command.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { loadScenario, runScenario, scenarioFiles } from "./runner.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = process.env.DSH_NODE_PACKAGE ?? join(here, "..");
const lib = createRequire(join(packageDir, "package.json"))(packageDir);
const root = process.env.DSH_CONFORMANCE_DIR ?? join(here, "../../../conformance/scenarios");
const rustFile = process.env.DSH_CONFORMANCE_RUST;
if (!rustFile) {
  throw new Error("DSH_CONFORMANCE_RUST is not set: run `cargo xtask conformance-node`, which writes the Rust runner's steps");
}
const rust = JSON.parse(readFileSync(rustFile, "utf8"));

const scenarios = scenarioFiles(root).map(loadScenario).filter((sc) => sc.providers.includes("disk"));

test("the Rust runner ran the same disk scenarios", () => {
  assert.deepEqual(Object.keys(rust).sort(), scenarios.map((sc) => sc.name).sort());
});

for (const sc of scenarios) {
  test(`${sc.name} [disk] (${relative(root, sc.file)})`, async () => {
    const result = await runScenario(lib, sc);
    const theirs = rust[sc.name];
    assert.ok(theirs, `the Rust runner has no steps for ${sc.name}`);
    // Step by step: the same observations, the same verdict.
    for (const [i, mine] of result.steps.entries()) {
      const other = theirs.steps[i];
      const { error: myError, ...mineSeen } = mine;
      const { error: theirError, ...otherSeen } = other ?? {};
      assert.deepEqual(mineSeen, otherSeen, `step ${i + 1} (${mine.action}) differs from the Rust runner's`);
      assert.equal(myError === undefined, theirError === undefined, `step ${i + 1}: an error on one side only: ${myError ?? theirError}`);
    }
    assert.equal(result.steps.length, theirs.steps.length, "the runners stopped at different steps");
    assert.equal(result.ok, theirs.ok, `verdicts differ: node ${result.reason ?? "ok"}, rust ${theirs.reason ?? "ok"}`);
    assert.ok(result.ok, result.reason);
  });
}
