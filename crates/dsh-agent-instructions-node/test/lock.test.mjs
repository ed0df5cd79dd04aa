// Two processes on one session directory: the session lock holds (R-LOG-4, R-NODE-4).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { packageDir, repo, storeIn, cleanup } from "./helpers.mjs";

test("a session open in one process is locked for another until it closes", async (t) => {
  const base = repo();
  t.after(() => cleanup(base));
  const store = storeIn(base, { lockWaitMs: 100 });
  const s = await store.create(join(base, "repo"), { id: "shared" });
  await s.prompt("hi");

  // The other process opens the same session, reports, and waits for a line.
  const child = spawn(process.execPath, ["--input-type=module", "-e", `
    import { createRequire } from "node:module";
    const { SessionStore } = createRequire(${JSON.stringify(join(packageDir, "package.json"))})(${JSON.stringify(packageDir)});
    const store = new SessionStore({ dir: ${JSON.stringify(join(base, "sessions"))}, env: { HOME: ${JSON.stringify(join(base, "home"))} }, lockWaitMs: 100 });
    const report = async (f) => { try { await f(); return "ok"; } catch (e) { return e.code + " " + (e.path ?? ""); } };
    process.stdout.write(await report(() => store.open("shared")) + "\\n");
    process.stdin.once("data", async () => {
      const r = await report(async () => { const s = await store.open("shared"); await s.touch("pkg/a", "read"); await s.close(); });
      process.stdout.write(r + "\\n");
      process.exit(0);
    });
  `], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = [];
  child.stdout.setEncoding("utf8");
  const nextLine = async () => {
    while (lines.length === 0) {
      const [chunk] = await once(child.stdout, "data");
      lines.push(...chunk.split("\n").filter(Boolean));
    }
    return lines.shift();
  };
  const first = await nextLine();
  assert.match(first, /^ERR_DSH_SESSION_LOCKED .*shared/);
  await s.close();
  child.stdin.write("go\n");
  assert.equal(await nextLine(), "ok");
  await once(child, "exit");

  // The other process's touch is in the log: this one sees it on resume.
  const back = await store.open("shared");
  assert.deepEqual((await back.pending()).source.changes.map((c) => c.path), ["pkg/AGENTS.md"]);
  await back.close();
});
