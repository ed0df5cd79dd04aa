// The pi extension (decision 0086) driven through pi's extension API by a
// fake pi: the events pi 0.73.1 fires, recorded from the real pi
// (test/fixtures/pi/, the agent harness's payloads), and variations of them
// with the same fields. The real pi runs it in `cargo xtask e2e --agent pi`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { packageDir, tree, cleanup, fixture, lib } from "./helpers.mjs";

const pi = await import(pathToFileURL(join(packageDir, "agents", "pi.mjs")).href);

/** The pi profile's configuration (what the installed extension passes). */
const CONFIG = pi.PI_CONFIG;

/** One pi process: its handlers, over a session branch that outlives it. */
function process1(base, branch, cwd = join(base, "repo"), id = "0199-pi-session", extra = {}) {
  const handlers = {};
  const api = {
    on(event, handler) {
      (handlers[event] ??= []).push(handler);
    },
    appendEntry(customType, data) {
      branch.push({ type: "custom", id: `e${branch.length}`, customType, data });
    },
  };
  pi.piExtension({
    agent: "pi",
    config: CONFIG,
    store: join(base, "store"),
    env: { HOME: join(base, "home") },
    ...extra,
  })(api);
  const ctx = { cwd, sessionManager: { getSessionId: () => id, getBranch: () => branch } };
  const emit = async (event, payload = {}, c = ctx) => {
    let out;
    for (const h of handlers[event] ?? []) out = await h({ type: event, ...payload }, c);
    return out;
  };
  return { emit, ctx };
}

/** `before_agent_start` with pi's own files as `contextFiles`. */
function start(base, prompt, files) {
  return {
    prompt,
    systemPrompt: "pi's prompt",
    systemPromptOptions: {
      cwd: join(base, "repo"),
      contextFiles: files.map((p) => ({ path: join(base, p), content: readBack(base, p) })),
    },
  };
}

const readBack = (base, p) => readFileSync(join(base, p), "utf8");

function layout() {
  return tree({
    "repo/.git/": "",
    "repo/AGENTS.md": "PI-ROOT-V1\n",
    "repo/AGENTS.local.md": "PI-LOCAL\n",
    "repo/pkg/AGENTS.md": "PI-PKG\n",
    "repo/pkg/a.ts": "x\n",
    "repo/sh/AGENTS.md": "PI-SHELL\n",
    "repo/sh/f.txt": "y\n",
    "repo/q/AGENTS.md": "PI-FAILED\n",
    "home/.dsh/AGENTS.md": "PI-DSH-HOME\n",
    "home/.pi/agent/AGENTS.md": "PI-USER\n",
  });
}

const PI_OWN = ["home/.pi/agent/AGENTS.md", "repo/AGENTS.md"];

const INTRO =
  "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";

/** The harness's workspace, with the contents its recorded payloads hold. */
function recordedLayout() {
  return tree({
    "repo/.git/": "",
    "repo/AGENTS.md": "# Root instructions\nROOT-AGENTS-MD: prefer small diffs.\n",
    "repo/AGENTS.local.md": "LOCAL-OVERLAY\n",
    "repo/sub/AGENTS.md": "# Sub instructions\nSUB-AGENTS-MD: files here are fixtures.\n",
    "repo/sub/file.txt": "FILE-TXT-CONTENT hello from sub/file.txt\n",
    "home/.dsh/AGENTS.md": "DSH-HOME\n",
  });
}

test("a recorded pi session, in order: start, prompt, read, compaction, read, quit", async () => {
  const base = recordedLayout();
  const ws = join(base, "repo");
  const branch = [];
  try {
    const { emit } = process1(base, branch, ws);
    assert.equal(await emit("session_start", fixture("pi", "session_start-startup", ws)), undefined);

    // pi holds the root AGENTS.md (contextFiles): the message has the rest,
    // in the project's order.
    const prompt = fixture("pi", "before_agent_start", ws);
    assert.equal(prompt.systemPromptOptions.contextFiles[0].path, join(ws, "AGENTS.md"));
    const first = await emit("before_agent_start", prompt);
    assert.deepEqual(Object.keys(first), ["message"]);
    assert.equal(
      first.message.content,
      `<system-reminder>\n${INTRO}\n\nInstructions from: ~/.dsh/AGENTS.md\n\nDSH-HOME\n\n\nInstructions from: AGENTS.local.md\n\nLOCAL-OVERLAY\n\n</system-reminder>`,
    );

    // tool_call is left alone (a throw there breaks the tool).
    assert.equal(await emit("tool_call", fixture("pi", "tool_call-read", ws)), undefined);
    const read = fixture("pi", "tool_result-read", ws);
    const patched = await emit("tool_result", read);
    assert.deepEqual(patched.content[0], read.content[0], "pi's own result stays first, unchanged");
    assert.equal(patched.content.length, 2);
    assert.match(
      patched.content[1].text,
      /^<system-reminder>\nAdditional instructions from: sub\/AGENTS\.md\n\n[^\n]+\n\n# Sub instructions\nSUB-AGENTS-MD: files here are fixtures\.\n\n<\/system-reminder>$/,
    );
    assert.equal(await emit("tool_result", read), undefined, "a file once given is not given again");

    // pi compacted (its entry on the branch, then the event): the next
    // step has the complete baseline again, still without pi's own file,
    // then the nested file again.
    const compact = fixture("pi", "session_compact", ws);
    branch.push(compact.compactionEntry);
    await emit("session_compact", compact);
    assert.ok(branch.some((e) => e.type === "custom" && e.data?.compacted === compact.compactionEntry.id));
    const after = await emit("tool_result", read);
    const text = after.content[1].text;
    assert.ok(text.indexOf("DSH-HOME") < text.indexOf("LOCAL-OVERLAY"), text);
    assert.ok(text.indexOf("LOCAL-OVERLAY") < text.indexOf("SUB-AGENTS-MD"), text);
    assert.doesNotMatch(text, /ROOT-AGENTS-MD/);
    assert.equal(await emit("session_shutdown", fixture("pi", "session_shutdown-quit", ws)), undefined);
  } finally {
    cleanup(base);
  }
});

test("pi's own files are left out; what pi lacks follows the prompt as a custom message", async () => {
  const base = layout();
  try {
    const { emit } = process1(base, []);
    await emit("session_start", { reason: "startup" });
    const out = await emit("before_agent_start", start(base, "hello", PI_OWN));
    assert.equal(out.message.customType, "dsh-instructions");
    assert.equal(out.message.display, false);
    const text = out.message.content;
    assert.match(text, /Instructions from: ~\/\.dsh\/AGENTS\.md\n\nPI-DSH-HOME/);
    assert.match(text, /Instructions from: AGENTS\.local\.md\n\nPI-LOCAL/);
    assert.doesNotMatch(text, /PI-ROOT-V1|PI-USER/);
    await emit("session_shutdown", { reason: "quit" });
  } finally {
    cleanup(base);
  }
});

test("without contextFiles (another pi) nothing is left out: a copy too many, never one too few", async () => {
  const base = layout();
  try {
    const { emit } = process1(base, []);
    await emit("session_start", { reason: "startup" });
    const out = await emit("before_agent_start", { prompt: "hello", systemPrompt: "x" });
    assert.match(out.message.content, /PI-ROOT-V1/);
    assert.match(out.message.content, /PI-USER/);
    await emit("session_shutdown", {});
  } finally {
    cleanup(base);
  }
});

test("nested files arrive on a read, an edit and a shell command, appended to the tool result", async () => {
  const base = layout();
  try {
    const { emit } = process1(base, []);
    await emit("session_start", { reason: "startup" });
    await emit("before_agent_start", start(base, "hello", PI_OWN));
    const original = [{ type: "text", text: "x\n" }];
    const read = await emit("tool_result", {
      toolName: "read",
      toolCallId: "c1",
      input: { path: join(base, "repo/pkg/a.ts") },
      content: original,
      isError: false,
    });
    assert.equal(read.content.length, 2);
    assert.deepEqual(read.content[0], original[0]);
    assert.match(read.content[1].text, /Additional instructions from: pkg\/AGENTS\.md/);
    assert.match(read.content[1].text, /PI-PKG/);
    const failed = await emit("tool_result", {
      toolName: "read",
      input: { path: "q/missing.txt" },
      content: [{ type: "text", text: "ENOENT" }],
      isError: true,
    });
    assert.equal(failed, undefined, "a failed tool touches nothing");
    const shell = await emit("tool_result", {
      toolName: "bash",
      input: { command: "cat sh/f.txt" },
      content: [{ type: "text", text: "y\n" }],
      isError: false,
    });
    assert.match(shell.content.at(-1).text, /Additional instructions from: sh\/AGENTS\.md/);
    assert.doesNotMatch(shell.content.at(-1).text, /PI-FAILED/);
    await emit("session_shutdown", {});
  } finally {
    cleanup(base);
  }
});

test("a file pi loaded that changes arrives as a replace, and stays ours across resumes", async () => {
  const base = layout();
  const branch = [];
  try {
    let p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    await p.emit("before_agent_start", start(base, "one", PI_OWN));
    const piHoldsV1 = start(base, "two", PI_OWN); // pi read its files at start
    writeFileSync(join(base, "repo/AGENTS.md"), "PI-ROOT-V2\n");
    const two = await p.emit("before_agent_start", piHoldsV1);
    assert.match(two.message.content, /Updated instructions from: AGENTS\.md\n\n[^\n]+\n\nPI-ROOT-V2/);
    await p.emit("session_shutdown", {});

    // Resumed: pi reads V2 itself now; nothing changed for the engine.
    p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    assert.equal(await p.emit("before_agent_start", start(base, "three", PI_OWN)), undefined);
    await p.emit("session_shutdown", {});

    // Edited while pi was not running: pi holds V3, and our V2 is in the
    // model's context, so V3 must come from us too.
    writeFileSync(join(base, "repo/AGENTS.md"), "PI-ROOT-V3\n");
    p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    const four = await p.emit("before_agent_start", start(base, "four", PI_OWN));
    assert.match(four.message.content, /Updated instructions from: AGENTS\.md[\s\S]*PI-ROOT-V3/);
    await p.emit("session_shutdown", {});
  } finally {
    cleanup(base);
  }
});

test("edited and removed while pi was not running: the removal arrives, pi's new copy is not repeated", async () => {
  const base = layout();
  const branch = [];
  try {
    let p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    await p.emit("before_agent_start", start(base, "one", PI_OWN));
    await p.emit("tool_result", { toolName: "read", input: { path: "pkg/a.ts" }, content: [], isError: false });
    await p.emit("session_shutdown", {});
    writeFileSync(join(base, "repo/AGENTS.md"), "PI-ROOT-V2\n");
    rmSync(join(base, "repo/pkg/AGENTS.md"));
    p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    const out = await p.emit("before_agent_start", start(base, "two", PI_OWN));
    assert.match(out.message.content, /Instructions removed: pkg\/AGENTS\.md/);
    assert.doesNotMatch(out.message.content, /PI-ROOT/);
    await p.emit("session_shutdown", {});
  } finally {
    cleanup(base);
  }
});

test("a compaction pi made after the extension shut down is caught up at the next start", async () => {
  const base = layout();
  const branch = [];
  try {
    let p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    const first = await p.emit("before_agent_start", start(base, "one", PI_OWN));
    assert.match(first.message.content, /PI-LOCAL/);
    await p.emit("session_shutdown", {});
    branch.push({ type: "compaction", id: "k1", firstKeptEntryId: "gone" });
    p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    const again = await p.emit("before_agent_start", start(base, "two", PI_OWN));
    assert.match(again.message.content, /The following workspace instructions/);
    assert.match(again.message.content, /PI-LOCAL/);
    assert.doesNotMatch(again.message.content, /PI-ROOT-V1/);
    assert.ok(branch.some((e) => e.type === "custom" && e.data?.compacted === "k1"));
    await p.emit("session_shutdown", {});
    p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    assert.equal(await p.emit("before_agent_start", start(base, "three", PI_OWN)), undefined, "told once");
    await p.emit("session_shutdown", {});
  } finally {
    cleanup(base);
  }
});

test("a compaction in a live process gives the baseline at the next tool step", async () => {
  const base = layout();
  const branch = [];
  try {
    const p = process1(base, branch);
    await p.emit("session_start", { reason: "startup" });
    await p.emit("before_agent_start", start(base, "one", PI_OWN));
    branch.push({ type: "compaction", id: "k2", firstKeptEntryId: "gone" });
    await p.emit("session_compact", { compactionEntry: { id: "k2" } });
    const step = await p.emit("tool_result", { toolName: "ls", input: {}, content: [], isError: false });
    assert.match(step.content.at(-1).text, /The following workspace instructions[\s\S]*PI-LOCAL/);
    await p.emit("session_shutdown", {});
  } finally {
    cleanup(base);
  }
});

test("above the project root pi takes the first name per directory: a shadowed CLAUDE.md is not given", async () => {
  const base = tree({
    "AGENTS.md": "PI-ABOVE-AGENTS\n",
    "CLAUDE.md": "PI-ABOVE-CLAUDE\n",
    "repo/.git/": "",
    "repo/AGENTS.md": "PI-ROOT\n",
    "home/": "",
  });
  try {
    const { emit } = process1(base, []);
    await emit("session_start", { reason: "startup" });
    const out = await emit("before_agent_start", start(base, "hello", ["AGENTS.md", "repo/AGENTS.md"]));
    assert.equal(out, undefined, out?.message.content);
    await emit("session_shutdown", {});
  } finally {
    cleanup(base);
  }
});

test("nothing a handler meets is thrown into pi", async () => {
  const base = layout();
  try {
    const broken = { cwd: join(base, "repo"), sessionManager: { getSessionId: () => "s-broken", getBranch: () => { throw new Error("boom"); } } };
    const { emit } = process1(base, []);
    await emit("session_start", { reason: "startup" }, broken);
    assert.equal(await emit("before_agent_start", start(base, "x", PI_OWN), broken), undefined);
    assert.equal(await emit("tool_result", { toolName: "read", input: { path: "pkg/a.ts" }, content: [] }, broken), undefined);
    assert.equal(await emit("tool_result", null, broken), undefined);
    await emit("session_compact", {}, broken);
    await emit("session_shutdown", {}, broken);
    assert.match(readFileSync(join(base, "store/hook.log"), "utf8"), /boom/);
  } finally {
    cleanup(base);
  }
});

test("an engine that fails (its session held by another process) never throws into pi; the next prompt gets it", async () => {
  const base = recordedLayout();
  const ws = join(base, "repo");
  try {
    const holder = new lib.SessionStore({ dir: join(base, "store", "sessions"), env: { HOME: join(base, "home") } });
    const held = await holder.create(ws, { id: "0199-pi-session", preset: "dsh" });
    const { emit } = process1(base, [], ws, "0199-pi-session", { lockWaitMs: 50 });
    assert.equal(await emit("session_start", fixture("pi", "session_start-startup", ws)), undefined);
    assert.equal(await emit("before_agent_start", fixture("pi", "before_agent_start", ws)), undefined);
    assert.equal(await emit("tool_result", fixture("pi", "tool_result-read", ws)), undefined);
    assert.match(readFileSync(join(base, "store/hook.log"), "utf8"), /ERR_DSH_SESSION_LOCKED/);
    await held.close();
    const next = await emit("before_agent_start", fixture("pi", "before_agent_start", ws));
    assert.match(next.message.content, /LOCAL-OVERLAY/);
    await emit("session_shutdown", fixture("pi", "session_shutdown-quit", ws));
  } finally {
    cleanup(base);
  }
});

test("the touches of pi's built-in tools", () => {
  const t = (tool, input) => pi.piTouches(tool, input, "/w", "/h");
  assert.deepEqual(t("read", { path: "a/b.ts" }), [{ path: "/w/a/b.ts", kind: "read" }]);
  assert.deepEqual(t("edit", { path: "/x/y", edits: [] }), [{ path: "/x/y", kind: "write" }]);
  assert.deepEqual(t("write", { path: "~/n" }), [{ path: "/h/n", kind: "write" }]);
  assert.deepEqual(t("grep", { pattern: "p" }), [{ path: "/w", kind: "search" }]);
  assert.deepEqual(t("find", { pattern: "*", path: "src" }), [{ path: "/w/src", kind: "search" }]);
  assert.deepEqual(t("ls", {}), [{ path: "/w", kind: "list" }]);
  assert.deepEqual(t("bash", { command: "cd a && cat b" }), [{ path: "/w", kind: "shell", command: "cd a && cat b" }]);
  assert.deepEqual(t("my_tool", { path: "a" }), []);
  // A name of every object's prototype is no tool of the table.
  assert.deepEqual(t("toString", { path: "a" }), []);
  assert.deepEqual(t("read", {}), []);
  assert.deepEqual(t("bash", { command: 7 }), []);
});
