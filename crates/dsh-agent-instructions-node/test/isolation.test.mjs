// Many sessions in one process: isolated, each served in arrival order (R-NODE-4).
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { tree, storeIn, cleanup } from "./helpers.mjs";

test("sessions in different workspaces never see each other's files", async (t) => {
  const n = 12;
  const files = { "home/": "" };
  for (let i = 0; i < n; i++) {
    files[`w${i}/.git/`] = "";
    files[`w${i}/AGENTS.md`] = `root of [ws-${i}]`;
    files[`w${i}/sub/AGENTS.md`] = `nested of [ws-${i}]`;
  }
  const base = tree(files);
  t.after(() => cleanup(base));
  const store = storeIn(base);
  const sessions = await Promise.all(
    Array.from({ length: n }, (_, i) => store.create(join(base, `w${i}`), { id: `s${i}` })),
  );
  // Every session's calls interleaved with every other's.
  const turns = await Promise.all(sessions.map((s) => s.prompt("hi")));
  const touches = await Promise.all(sessions.map((s) => s.touch("sub/x.ts", "read")));
  const steps = await Promise.all(sessions.map((s) => s.stepEnd()));
  for (let i = 0; i < n; i++) {
    for (const [what, m] of [["turn", turns[i]], ["touch", touches[i]], ["step", steps[i]]]) {
      for (let j = 0; j < n; j++) {
        if (j !== i) assert.ok(!m.text.includes(`[ws-${j}]`), `${what} of s${i} shows workspace ${j}`);
      }
    }
    assert.ok(turns[i].text.includes(`root of [ws-${i}]`));
    assert.ok(steps[i].text.includes(`nested of [ws-${i}]`));
  }
  await Promise.all(sessions.map((s) => s.close()));
});

test("calls made without awaiting are served in the order they were made", async (t) => {
  const base = tree({
    "repo/.git/": "",
    "repo/AGENTS.md": "root",
    "repo/a/AGENTS.md": "A",
    "repo/b/AGENTS.md": "B",
    "home/": "",
  });
  t.after(() => cleanup(base));
  const s = await storeIn(base).create(join(base, "repo"));
  // Not awaited: each resolves to what the session held at its turn.
  const calls = [
    s.prompt("hi"),
    s.pending(),
    s.touch("a/x", "read"),
    s.pending(),
    s.touch("b/x", "read"),
    s.stepEnd(),
    s.pending(),
  ];
  const [turn, none, a, pendingA, ab, step, after] = await Promise.all(calls);
  assert.equal(turn.source.baseline, true);
  assert.equal(none, null);
  assert.deepEqual(a.source.changes.map((c) => c.path), ["a/AGENTS.md"]);
  assert.deepEqual(pendingA, a);
  assert.deepEqual(ab.source.changes.map((c) => c.path), ["a/AGENTS.md", "b/AGENTS.md"]);
  assert.deepEqual(step, ab);
  assert.equal(after, null);
  await s.close();
});
