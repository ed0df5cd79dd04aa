// The Node side of the binding's benchmark rows (`cargo xtask bench node`,
// issue 47 item 7), over a tree the xtask made (TREE/repo with d0 … d{DIRS-1},
// TREE/home):
//
//   node <label> <median µs> <p90 µs>   one event through the binding: a kept
//                                        read, then the step's end (as
//                                        benches/event.rs does in Rust)
//   spawn <label> <median µs> <p90 µs>  the same read as one hook process
//                                        (`dsh-instructions hook --agent claude`)
//   mem <sessions> <KiB per session>    RSS of open sessions in one process
//
// Usage: node --expose-gc bench/event.mjs PACKAGE TREE LABEL DIRS ITERATIONS CLI MEM_SESSIONS
// (MEM_SESSIONS 0: no memory row)
import { createRequire } from "node:module";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const [packageDir, tree, label, dirsArg, iterationsArg, cli, memArg] = process.argv.slice(2);
const dirs = Number(dirsArg);
const iterations = Number(iterationsArg);
const { SessionStore } = createRequire(join(packageDir, "package.json"))(packageDir);
const env = { HOME: join(tree, "home") };
const file = (d) => join(tree, "repo", `d${d}`, "lib.rs");

function stats(us) {
  us.sort((a, b) => a - b);
  return `${us[Math.floor(us.length / 2)].toFixed(1)} ${us[Math.floor((us.length * 9) / 10)].toFixed(1)}`;
}

const now = () => Number(process.hrtime.bigint()) / 1000;

async function event(session, d) {
  await session.touch(file(d), "read");
  await session.stepEnd();
}

// Through the binding.
{
  const store = new SessionStore({ dir: join(tree, "sessions-node"), env });
  const session = await store.create(join(tree, "repo"), { id: label, preset: "dsh" });
  await session.prompt("hi");
  for (let d = 0; d < dirs; d++) await event(session, d);
  const us = [];
  for (let i = 0; i < iterations; i++) {
    const start = now();
    await event(session, i % dirs);
    us.push(now() - start);
  }
  await session.close();
  console.log(`node ${label} ${stats(us)}`);
}

// The same read as a hook process each time.
{
  const hookEnv = { ...process.env, HOME: env.HOME, DSH_HOME: join(tree, "home", ".dsh") };
  const send = (payload) => {
    const r = spawnSync(cli, ["hook", "--agent", "claude"], { input: JSON.stringify(payload), env: hookEnv, cwd: join(tree, "repo") });
    if (r.status !== 0) throw new Error(`hook exited ${r.status}: ${r.stderr}`);
  };
  const base = { session_id: `spawn-${label}`, transcript_path: "/dev/null", cwd: join(tree, "repo") };
  const read = (d) => ({ ...base, hook_event_name: "PostToolUse", tool_name: "Read", tool_input: { file_path: file(d) }, tool_response: {} });
  send({ ...base, hook_event_name: "SessionStart", source: "startup" });
  for (let d = 0; d < dirs; d++) send(read(d));
  const us = [];
  const spawns = Math.min(iterations, 60);
  for (let i = 0; i < spawns; i++) {
    const start = now();
    send(read(i % dirs));
    us.push(now() - start);
  }
  console.log(`spawn ${label} ${stats(us)}`);
}

// Memory of open sessions, each with its baseline and every directory known.
const count = Number(memArg ?? 0);
if (count > 0) {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const store = new SessionStore({ dir: join(tree, "sessions-mem"), env });
  const sessions = [];
  for (let i = 0; i < count; i++) {
    const s = await store.create(join(tree, "repo"), { id: `m${i}`, preset: "dsh" });
    await s.prompt("hi");
    for (let d = 0; d < dirs; d++) await s.touch(file(d), "read", { record: "transient" });
    sessions.push(s);
  }
  globalThis.gc?.();
  const after = process.memoryUsage().rss;
  console.log(`mem ${count} ${((after - before) / 1024 / count).toFixed(0)}`);
  await Promise.all(sessions.map((s) => s.close()));
}
