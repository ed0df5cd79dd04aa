// Bad input gets an Error with a stable code and the path or field (R-NODE-3).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lib, repo, storeIn, cleanup } from "./helpers.mjs";

/** Asserts that `promise` rejects with an Error of `code` and these fields. */
async function rejects(promise, code, fields = {}) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof Error, `not an Error: ${e}`);
    assert.equal(e.code, code, e.message);
    for (const [k, v] of Object.entries(fields)) assert.equal(e[k], v, `${k} of ${e.message}`);
    return true;
  });
}

test("a bad cwd: relative, missing, a file, a NUL", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  await rejects(store.create("repo"), "ERR_DSH_RELATIVE_PATH", { path: "repo", field: "cwd" });
  await rejects(store.create(join(base, "nope")), "ERR_DSH_MISSING_CWD", { path: join(base, "nope") });
  await rejects(store.create(join(base, "repo/AGENTS.md")), "ERR_DSH_MISSING_CWD");
  await rejects(store.create(join(base, "re\0po")), "ERR_DSH_NUL_IN_ARGUMENT", { field: "cwd" });
  await rejects(lib.preview("relative"), "ERR_DSH_RELATIVE_PATH", { field: "cwd" });
  assert.throws(() => new lib.SessionStore({ dir: "rel" }), { code: "ERR_DSH_RELATIVE_PATH", field: "dir" });
});

test("a bad configuration names its field, and creates nothing", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  const cwd = join(base, "repo");
  await rejects(store.create(cwd, { id: "a", preset: "vim" }), "ERR_DSH_CONFIG", { field: "preset" });
  await rejects(store.create(cwd, { id: "a", config: { max_byts: 1 } }), "ERR_DSH_CONFIG", { field: "max_byts" });
  await rejects(store.create(cwd, { id: "a", config: { max_bytes: "lots" } }), "ERR_DSH_CONFIG", { field: "max_bytes" });
  await rejects(store.create(cwd, { id: "a", config: [] }), "ERR_DSH_CONFIG", { field: "config" });
  await rejects(store.create(cwd, { id: "a", trust: ["rel"] }), "ERR_DSH_RELATIVE_PATH", { field: "trust" });
  await rejects(lib.explain(cwd, { config: { candidate_policy: "all" } }), "ERR_DSH_CONFIG", { field: "candidate_policy" });
  assert.equal(await store.exists("a"), false, "a refused create leaves no session");
});

test("bad session ids, a taken id, an unknown id", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  const cwd = join(base, "repo");
  await rejects(store.create(cwd, { id: "../escape" }), "ERR_DSH_INVALID_ARGUMENT", { field: "id" });
  await rejects(store.create(cwd, { id: "a\0b" }), "ERR_DSH_NUL_IN_ARGUMENT", { field: "id" });
  const s = await store.create(cwd, { id: "taken" });
  await s.close();
  await rejects(store.create(cwd, { id: "taken" }), "ERR_DSH_SESSION_EXISTS", { path: join(base, "sessions/taken/session.jsonl") });
  await rejects(store.open("missing"), "ERR_DSH_NO_SESSION", { path: join(base, "sessions/missing/session.jsonl") });
});

test("a damaged or foreign session directory", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  mkdirSync(join(base, "sessions/foreign"), { recursive: true });
  writeFileSync(join(base, "sessions/foreign/session.jsonl"), "this is not a session log\n");
  await rejects(store.open("foreign"), "ERR_DSH_SESSION_DAMAGED");
  const s = await store.create(join(base, "repo"), { id: "bad-settings" });
  await s.close();
  writeFileSync(join(base, "sessions/bad-settings/settings.json"), "{\"conf");
  await rejects(store.open("bad-settings"), "ERR_DSH_SESSION_DAMAGED", { path: join(base, "sessions/bad-settings/settings.json") });
});

test("bad touch arguments name their field and append nothing", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const s = await storeIn(base).create(join(base, "repo"), { id: "t" });
  const log = join(base, "sessions/t/session.jsonl");
  const before = readFileSync(log, "utf8");
  await rejects(s.touch("a.ts", "edit"), "ERR_DSH_INVALID_ARGUMENT", { field: "kind" });
  await rejects(s.touch(".", "shell"), "ERR_DSH_INVALID_ARGUMENT", { field: "command" });
  await rejects(s.touch("a.ts", "read", { command: "cat" }), "ERR_DSH_INVALID_ARGUMENT", { field: "command" });
  await rejects(s.touch("a.ts", "read", { record: "forever" }), "ERR_DSH_INVALID_ARGUMENT", { field: "record" });
  await rejects(s.touch("a\0.ts", "read"), "ERR_DSH_NUL_IN_ARGUMENT", { field: "path" });
  await rejects(s.prompt("x", {}), "ERR_DSH_INVALID_ARGUMENT", { field: "signal" });
  assert.equal(readFileSync(log, "utf8"), before);
  await s.close();
});

test("a call on a closed session, and close twice", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const s = await storeIn(base).create(join(base, "repo"));
  await s.close();
  await s.close();
  for (const call of [() => s.prompt("x"), () => s.touch("a", "read"), () => s.stepEnd(), () => s.pending(), () => s.compactWorkspace(), () => s.previewNext()]) {
    await rejects(call(), "ERR_DSH_SESSION_CLOSED");
  }
});
