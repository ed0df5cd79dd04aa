// The README's example runs as written, against the package under test (R-NODE-1).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdirSync, symlinkSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageDir, tree, cleanup } from "./helpers.mjs";

test("the README example runs", (t) => {
  const readme = readFileSync(join(packageDir, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 1, "one js example in the README");
  const base = tree();
  t.after(() => cleanup(base));
  // A project that depends on the package: `import … from "dsh-agent-instructions"`.
  mkdirSync(join(base, "node_modules"));
  symlinkSync(packageDir, join(base, "node_modules", "dsh-agent-instructions"), "dir");
  writeFileSync(join(base, "example.mjs"), blocks[0]);
  const run = spawnSync(process.execPath, ["example.mjs"], { cwd: base, encoding: "utf8" });
  assert.equal(run.status, 0, `the example failed:\n${run.stdout}${run.stderr}`);
});
