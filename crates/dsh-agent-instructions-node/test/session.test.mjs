// The session path through the binding: what the model sees at each call (R-NODE-1).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { lib, repo, storeIn, cleanup } from "./helpers.mjs";

test("a turn, a nested touch, compaction: the messages the model gets", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  const session = await store.create(join(base, "repo"), { id: "s1", preset: "dsh" });
  assert.equal(session.id, "s1");
  assert.equal(session.cwd, join(base, "repo"));

  const baseline = await session.prompt("hi");
  assert.equal(baseline.source.baseline, true);
  assert.deepEqual(baseline.source.changes.map((c) => c.path), ["AGENTS.md"]);
  assert.ok(baseline.text.includes("Run the tests."));
  assert.ok(!baseline.text.includes("Use pnpm."), "the nested file waits for a touch");
  assert.equal(baseline.parts.join("\n"), baseline.text);

  const pending = await session.touch(join(base, "repo/pkg/index.ts"), "read");
  assert.deepEqual(pending.source.changes.map((c) => [c.action, c.path]), [["set", "pkg/AGENTS.md"]]);
  assert.deepEqual(await session.pending(), pending);

  const entered = await session.stepEnd();
  assert.ok(entered.text.includes("Use pnpm."));
  assert.equal(await session.pending(), null);
  assert.equal(await session.stepEnd(), null, "nothing changed since");

  // An edit of a visible file: a replace at the next step.
  writeFileSync(join(base, "repo/AGENTS.md"), "Run all the tests.");
  const replaced = await session.touch("AGENTS.md", "write");
  assert.deepEqual(replaced.source.changes.map((c) => c.action), ["replace"]);
  await session.stepEnd();

  const hidden = await session.compactWorkspace();
  assert.ok(hidden.length >= 3, `hid ${hidden}`);
  const again = await session.previewNext();
  assert.equal(again.source.baseline, true);
  const next = await session.prompt("go on");
  assert.equal(next.source.baseline, true);
  assert.ok(next.text.includes("Run all the tests."));
  await session.close();
  assert.equal(session.closed, true);
});

test("a shell touch reaches the files its command names", async (t) => {
  const base = repo({ "repo/lib/AGENTS.md": "Lib rules.", "repo/lib/a.ts": "x" });
  t.after(() => cleanup(base));
  const session = await storeIn(base).create(join(base, "repo"));
  await session.prompt("hi");
  const m = await session.touch(".", "shell", { command: "cat lib/a.ts && ls" });
  assert.deepEqual(m.source.changes.map((c) => c.path), ["lib/AGENTS.md"]);
  await session.close();
});

test("resume: a kept touch's message is composed again by the next open", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  const first = await store.create(join(base, "repo"), { id: "r1" });
  await first.prompt("hi");
  await first.touch("pkg/x.ts", "read");
  await first.close();
  assert.equal(await store.exists("r1"), true);
  assert.equal(await store.exists("r2"), false);

  const second = await store.open("r1");
  const pending = await second.pending();
  assert.deepEqual(pending.source.changes.map((c) => c.path), ["pkg/AGENTS.md"]);
  await second.close();
});

test("a transient touch is not kept for the next process", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  const first = await store.create(join(base, "repo"), { id: "t1" });
  await first.prompt("hi");
  assert.ok(await first.touch("pkg/x.ts", "read", { record: "transient" }));
  await first.close();
  const second = await store.open("t1");
  assert.equal(await second.pending(), null);
  await second.close();
});

test("the configuration is kept with the session", async (t) => {
  const base = repo({ "repo/CLAUDE.md": "Claude rules." });
  t.after(() => cleanup(base));
  unlinkSync(join(base, "repo/AGENTS.md"));
  const store = storeIn(base);
  const s = await store.create(join(base, "repo"), {
    id: "c1",
    config: { max_bytes: 4096, instruction_file_candidates: ["CLAUDE.md"] },
  });
  await s.close();
  const settings = JSON.parse(readFileSync(join(base, "sessions/c1/settings.json"), "utf8"));
  assert.equal(settings.config.max_bytes, 4096);
  const reopened = await store.open("c1");
  const m = await reopened.prompt("hi");
  assert.ok(m.text.includes("Claude rules."));
  assert.ok(m.source.baselineIdentity.includes('"max_bytes":4096'));
  await reopened.close();
});

test("explain and preview report a cwd without a session", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const env = { HOME: join(base, "home") };
  const p = await lib.preview(join(base, "repo/pkg"), { env });
  assert.equal(p.root, join(base, "repo"));
  assert.equal(p.rootReason, "marker .git");
  assert.equal(p.maxBytes, 65536);
  assert.deepEqual(p.source.changes.map((c) => c.path), ["AGENTS.md", "pkg/AGENTS.md"]);
  const i = await lib.explain(join(base, "repo/pkg"), { env, preset: "codex" });
  const fates = Object.fromEntries(i.candidates.map((c) => [c.path, c.fate.kind]));
  assert.equal(fates["pkg/AGENTS.md"], "loaded");
  assert.equal(fates["AGENTS.override.md"], "absent");
  assert.equal(i.baseline.maxBytes, 32768);
});
