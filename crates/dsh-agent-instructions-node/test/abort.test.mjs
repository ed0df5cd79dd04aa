// AbortSignal: every call takes one; an abort rejects with Node's AbortError (R-NODE-2).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lib, repo, storeIn, cleanup } from "./helpers.mjs";

const isAbort = (reason) => (e) => {
  assert.equal(e.name, "AbortError");
  assert.equal(e.code, "ABORT_ERR");
  if (reason !== undefined) assert.equal(e.cause, reason);
  return true;
};

test("an aborted signal rejects every call, with its reason, and appends nothing", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  const reason = new Error("the user pressed Esc");
  const ac = new AbortController();
  ac.abort(reason);
  await assert.rejects(store.create(join(base, "repo"), { id: "never" }, ac.signal), isAbort(reason));
  const s = await store.create(join(base, "repo"), { id: "a" });
  const log = join(base, "sessions/a/session.jsonl");
  const before = readFileSync(log, "utf8");
  await assert.rejects(s.prompt("x", ac.signal), isAbort(reason));
  await assert.rejects(s.touch("pkg/a.ts", "read", null, ac.signal), isAbort(reason));
  await assert.rejects(s.stepEnd(ac.signal), isAbort(reason));
  await assert.rejects(s.previewNext(ac.signal), isAbort(reason));
  await assert.rejects(lib.preview(join(base, "repo"), null, ac.signal), isAbort(reason));
  await assert.rejects(lib.explain(join(base, "repo"), null, ac.signal), isAbort(reason));
  assert.equal(readFileSync(log, "utf8"), before);
  // The session is still usable.
  assert.equal((await s.prompt("hi")).source.baseline, true);
  await s.close();
});

test("an abort of a call waiting in line rejects it; the calls around it run in order", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const s = await storeIn(base).create(join(base, "repo"));
  const ac = new AbortController();
  const first = s.prompt("one");
  const second = s.prompt("two", ac.signal);
  const third = s.touch("pkg/a.ts", "read");
  ac.abort();
  await assert.rejects(second, isAbort());
  assert.equal((await first).source.baseline, true);
  assert.deepEqual((await third).source.changes.map((c) => c.path), ["pkg/AGENTS.md"]);
  await s.close();
});

test("a signal used for many calls keeps no listener behind", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const s = await storeIn(base).create(join(base, "repo"));
  const ac = new AbortController();
  let added = 0;
  let removed = 0;
  const add = ac.signal.addEventListener.bind(ac.signal);
  const remove = ac.signal.removeEventListener.bind(ac.signal);
  ac.signal.addEventListener = (...a) => { added++; return add(...a); };
  ac.signal.removeEventListener = (...a) => { removed++; return remove(...a); };
  for (let i = 0; i < 20; i++) await s.pending(ac.signal);
  assert.equal(added, 20);
  assert.equal(removed, 20);
  await s.close();
});

test("an aborted close leaves the session open; exists takes a signal too", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base);
  const s = await store.create(join(base, "repo"), { id: "c" });
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(s.close(ac.signal), isAbort());
  assert.equal(s.closed, false);
  assert.equal((await s.prompt("hi")).source.baseline, true);
  await assert.rejects(store.exists("c", ac.signal), isAbort());
  assert.equal(await store.exists("c", new AbortController().signal), true);
  await s.close();
  assert.equal(s.closed, true);
});
