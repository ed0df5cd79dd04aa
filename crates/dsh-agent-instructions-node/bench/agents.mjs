// What the pi extension and the opencode plugin add to one tool call
// (`cargo xtask bench node`, issue 48 item 6), on a layout the xtask made
// (TREE/ws, the agent's cwd CWD below it, TREE/home):
//
//   pi <label> <median µs> <p90 µs>        one `tool_result` handler call:
//                                          a read in a known directory,
//                                          its touch and the step's end
//   opencode <label> <median µs> <p90 µs>  one `tool.execute.after` call,
//                                          the same read
//   hook <label> <median µs> <p90 µs>      the same read as one hook
//                                          process (`dsh-instructions hook
//                                          --agent claude`, PostToolUse)
//
// Usage: node bench/agents.mjs PACKAGE TREE CWD LABEL ITERATIONS CLI
import { spawnSync } from "node:child_process";
import { readdirSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, tree, cwdRel, label, iterationsArg, cli] = process.argv.slice(2);
const iterations = Number(iterationsArg);
const ws = join(tree, "ws");
const cwd = join(ws, cwdRel);
const home = join(tree, "home");
const env = { HOME: home, DSH_HOME: join(home, ".dsh") };
const { piExtension } = await import(pathToFileURL(join(packageDir, "agents", "pi.mjs")).href);
const { opencodePlugin } = await import(pathToFileURL(join(packageDir, "agents", "opencode.mjs")).href);

// A source file in every directory from the cwd up to the root: the reads
// cycle through them (every directory known after the first round).
const files = [];
for (let dir = cwd; ; dir = dirname(dir)) {
  const f = join(dir, "bench-source.ts");
  writeFileSync(f, "export const x = 1;\n");
  files.push(f);
  if (dir === ws) break;
}

function stats(us) {
  us.sort((a, b) => a - b);
  return `${us[Math.floor(us.length / 2)].toFixed(1)} ${us[Math.floor((us.length * 9) / 10)].toFixed(1)}`;
}
const now = () => Number(process.hrtime.bigint()) / 1000;

// What pi loads itself at the cwd: the first of its names per directory,
// from the cwd up (the layout has none above the workspace).
function piContextFiles() {
  const out = [];
  for (let dir = cwd; ; dir = dirname(dir)) {
    const name = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"].find((n) => existsSync(join(dir, n)) && readdirSync(dir).includes(n));
    if (name) out.unshift({ path: join(dir, name), content: readFileSync(join(dir, name), "utf8") });
    if (dir === ws) break;
  }
  return out;
}

// pi: the extension's handlers over a fake pi, as the tests drive it.
{
  const handlers = {};
  const branch = [];
  piExtension({ store: join(tree, "pi-store"), env })({
    on: (event, h) => (handlers[event] ??= []).push(h),
    appendEntry: (customType, data) => branch.push({ type: "custom", id: `e${branch.length}`, customType, data }),
  });
  const ctx = { cwd, sessionManager: { getSessionId: () => `bench-${label}`, getBranch: () => branch } };
  const emit = async (event, payload) => {
    let out;
    for (const h of handlers[event] ?? []) out = await h({ type: event, ...payload }, ctx);
    return out;
  };
  await emit("session_start", { reason: "startup" });
  await emit("before_agent_start", { prompt: "hi", systemPrompt: "", systemPromptOptions: { cwd, contextFiles: piContextFiles() } });
  const read = (i) => ({ toolName: "read", toolCallId: `c${i}`, input: { path: files[i % files.length] }, content: [{ type: "text", text: "x" }], isError: false });
  for (let i = 0; i < files.length; i++) await emit("tool_result", read(i));
  const us = [];
  for (let i = 0; i < iterations; i++) {
    const start = now();
    await emit("tool_result", read(i));
    us.push(now() - start);
  }
  await emit("session_shutdown", { reason: "quit" });
  console.log(`pi ${label} ${stats(us)}`);
}

// opencode: one plugin instance, one session.
{
  const hooks = await opencodePlugin({ store: join(tree, "opencode-store"), env }).server({ directory: cwd, worktree: ws });
  const sessionID = `ses_bench${label.replace(/[^A-Za-z0-9]/g, "")}`;
  const parts = [{ id: "prt_0", sessionID, messageID: "msg_0", type: "text", text: "hi" }];
  await hooks["chat.message"]({ sessionID, agent: null, model: {}, messageID: null }, { message: { id: "msg_0", sessionID }, parts });
  const after = async (i) => {
    const output = { title: "read", output: "x", metadata: { loaded: [] } };
    await hooks["tool.execute.after"]({ tool: "read", sessionID, callID: `c${i}`, args: { filePath: files[i % files.length] } }, output);
  };
  for (let i = 0; i < files.length; i++) await after(i);
  const us = [];
  for (let i = 0; i < iterations; i++) {
    const start = now();
    await after(i);
    us.push(now() - start);
  }
  console.log(`opencode ${label} ${stats(us)}`);
}

// The same read through the hook binary, one process per event.
{
  const hookEnv = { ...process.env, ...env };
  const send = (payload) => {
    const r = spawnSync(cli, ["hook", "--agent", "claude"], { input: JSON.stringify(payload), env: hookEnv, cwd });
    if (r.status !== 0) throw new Error(`hook exited ${r.status}: ${r.stderr}`);
  };
  const base = { session_id: `hook-${label}`, transcript_path: "/dev/null", cwd };
  const read = (i) => ({ ...base, hook_event_name: "PostToolUse", tool_name: "Read", tool_input: { file_path: files[i % files.length] }, tool_response: {} });
  send({ ...base, hook_event_name: "SessionStart", source: "startup" });
  for (let i = 0; i < files.length; i++) send(read(i));
  const us = [];
  const spawns = Math.min(iterations, 60);
  for (let i = 0; i < spawns; i++) {
    const start = now();
    send(read(i));
    us.push(now() - start);
  }
  console.log(`hook ${label} ${stats(us)}`);
}
