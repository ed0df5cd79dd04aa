// The opencode plugin (decision 0086) driven through opencode's plugin
// hooks by a fake opencode: the hook inputs and outputs recorded from the
// real opencode (test/fixtures/opencode/, the agent harness's payloads),
// and variations of them with the same fields. `cargo xtask npm --test` runs
// this file under Bun too, opencode's runtime; the real opencode runs it in
// `cargo xtask e2e --agent opencode`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { packageDir, tree, cleanup, fixture, lib } from "./helpers.mjs";

const oc = await import(pathToFileURL(join(packageDir, "agents", "opencode.mjs")).href);

/** The opencode profile's configuration (what the installed plugin passes). */
const CONFIG = oc.OPENCODE_CONFIG;

const INTRO =
  "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";

/** The harness's workspace, with the contents its recorded payloads hold. */
function recordedLayout() {
  return tree({
    "ws/.git/": "",
    "ws/AGENTS.md": "# Root instructions\nROOT-AGENTS-MD: prefer small diffs.\n",
    "ws/AGENTS.local.md": "LOCAL-OVERLAY\n",
    "ws/sub/AGENTS.md": "# Sub instructions\nSUB-AGENTS-MD: files here are fixtures.\n",
    "ws/sub/file.txt": "FILE-TXT-CONTENT hello from sub/file.txt\n",
    "home/.dsh/AGENTS.md": "DSH-HOME\n",
  });
}

/** The system prompt opencode sends for the recorded session: its head as recorded, then its instruction block. */
function systemPrompt(ws) {
  const head = fixture("opencode", "experimental.chat.system.transform", ws).output.system[0];
  return `${head}\n</env>\nInstructions from: ${join(ws, "AGENTS.md")}\n# Root instructions\nROOT-AGENTS-MD: prefer small diffs.\n\nSkills provide specialized instructions`;
}

test("a recorded opencode session, in order: prompt, read, request, compaction, prompt", async () => {
  const base = recordedLayout();
  const ws = join(base, "ws");
  try {
    const plugin = oc.opencodePlugin({ store: join(base, "store"), env: { HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "home/.config") } });
    const init = fixture("opencode", "plugin.init", ws).input;
    const hooks = await plugin.server(init);

    const chat = fixture("opencode", "chat.message", ws);
    const before = structuredClone(chat.output.parts);
    await hooks["chat.message"](chat.input, chat.output);
    assert.deepEqual(chat.output.parts.slice(0, 1), before, "the prompt's own part stays first, unchanged");
    assert.equal(chat.output.parts.length, 2);
    const added = chat.output.parts[1];
    assert.deepEqual(
      { type: added.type, synthetic: added.synthetic, sessionID: added.sessionID, messageID: added.messageID },
      { type: "text", synthetic: true, sessionID: chat.input.sessionID, messageID: chat.output.message.id },
    );
    assert.equal(
      added.text,
      `<system-reminder>\n${INTRO}\n\nInstructions from: ~/.dsh/AGENTS.md\n\nDSH-HOME\n\n\nInstructions from: AGENTS.local.md\n\nLOCAL-OVERLAY\n\n</system-reminder>`,
      "opencode's root AGENTS.md is its own (its system prompt)",
    );

    // opencode attached sub/AGENTS.md to the read itself: nothing more.
    const read = fixture("opencode", "tool.execute.after-read", ws);
    const recorded = read.output.output;
    await hooks["tool.execute.after"](read.input, read.output);
    assert.equal(read.output.output, recorded);

    // Its system prompt holds the root file: nothing is added there.
    const system = { system: [systemPrompt(ws)] };
    await hooks["experimental.chat.system.transform"]({ sessionID: chat.input.sessionID, model: {} }, system);
    assert.equal(system.system.length, 1);

    // After the compaction the next prompt has the baseline again, without
    // opencode's file; the nested file comes again on the next touch.
    await hooks.event({ event: fixture("opencode", "event.session.compacted", ws) });
    const again = fixture("opencode", "chat.message", ws);
    await hooks["chat.message"](again.input, again.output);
    assert.equal(again.output.parts[1].text, added.text);
    const write = { title: "w", output: "Wrote file successfully.", metadata: {} };
    await hooks["tool.execute.after"]({ tool: "write", sessionID: chat.input.sessionID, callID: "c2", args: { filePath: join(ws, "sub/new.txt"), content: "n" } }, write);
    assert.match(write.output, /^Wrote file successfully\.\n\n<system-reminder>\nAdditional instructions from: sub\/AGENTS\.md\n\n[^\n]+\n\n# Sub instructions\nSUB-AGENTS-MD/);
  } finally {
    cleanup(base);
  }
});

test("one opencode serve process: two sessions in two directories through one plugin, nothing of one reaches the other", async () => {
  const base = tree({
    "a/.git/": "",
    "a/AGENTS.md": "A-ROOT\n",
    "a/AGENTS.local.md": "A-LOCAL\n",
    "a/pkg/AGENTS.md": "A-PKG\n",
    "a/pkg/x.txt": "x\n",
    "b/.git/": "",
    "b/AGENTS.md": "B-ROOT\n",
    "b/AGENTS.local.md": "B-LOCAL\n",
    "b/pkg/AGENTS.md": "B-PKG\n",
    "b/pkg/x.txt": "x\n",
    "home/": "",
  });
  try {
    const plugin = oc.opencodePlugin({ store: join(base, "store"), env: { HOME: join(base, "home") } });
    const init = (dir) => ({ ...fixture("opencode", "plugin.init", join(base, dir)).input });
    const [ha, hb] = await Promise.all([plugin.server(init("a")), plugin.server(init("b"))]);
    const prompt = async (h, dir, id) => {
      const c = fixture("opencode", "chat.message", join(base, dir));
      c.input.sessionID = id;
      c.output.message.sessionID = id;
      await h["chat.message"](c.input, c.output);
      return c.output.parts.slice(1).map((p) => p.text).join("");
    };
    const touch = async (h, dir, id, tool, args) => {
      const out = { title: tool, output: "", metadata: {} };
      await h["tool.execute.after"]({ tool, sessionID: id, callID: "c", args }, out);
      return out.output;
    };
    // Interleaved, as a server serves them.
    const [pa, pb] = await Promise.all([prompt(ha, "a", "ses_a"), prompt(hb, "b", "ses_b")]);
    assert.match(pa, /A-LOCAL/);
    assert.doesNotMatch(pa, /B-/);
    assert.match(pb, /B-LOCAL/);
    assert.doesNotMatch(pb, /A-/);
    const [ta, tb] = await Promise.all([
      touch(ha, "a", "ses_a", "read", { filePath: join(base, "a/pkg/x.txt") }),
      touch(hb, "b", "ses_b", "bash", { command: "cat pkg/x.txt" }),
    ]);
    assert.match(ta, /A-PKG/);
    assert.doesNotMatch(ta, /B-/);
    assert.match(tb, /B-PKG/);
    assert.doesNotMatch(tb, /A-/);
    // A compaction of one session is that session's alone.
    await ha.event({ event: { type: "session.compacted", properties: { sessionID: "ses_a" } } });
    assert.equal(await prompt(hb, "b", "ses_b"), "");
    assert.match(await prompt(ha, "a", "ses_a"), /A-LOCAL/);
    // Another directory's instance does not know the session at all.
    await hb.event({ event: { type: "session.compacted", properties: { sessionID: "ses_a" } } });
    assert.equal(await prompt(ha, "a", "ses_a"), "");
  } finally {
    cleanup(base);
  }
});

test("an engine that fails never throws into opencode; the next prompt gets it", async () => {
  const base = recordedLayout();
  const ws = join(base, "ws");
  try {
    const chat = fixture("opencode", "chat.message", ws);
    const holder = new lib.SessionStore({ dir: join(base, "store", "sessions"), env: { HOME: join(base, "home") } });
    const held = await holder.create(ws, { id: chat.input.sessionID, preset: "dsh" });
    const plugin = oc.opencodePlugin({ store: join(base, "store"), lockWaitMs: 50, env: { HOME: join(base, "home") } });
    const hooks = await plugin.server(fixture("opencode", "plugin.init", ws).input);
    await hooks["chat.message"](chat.input, chat.output);
    assert.equal(chat.output.parts.length, 1);
    const read = fixture("opencode", "tool.execute.after-read", ws);
    const recorded = read.output.output;
    await hooks["tool.execute.after"](read.input, read.output);
    assert.equal(read.output.output, recorded);
    assert.match(readFileSync(join(base, "store/hook.log"), "utf8"), /ERR_DSH_SESSION_LOCKED/);
    await held.close();
    const again = fixture("opencode", "chat.message", ws);
    await hooks["chat.message"](again.input, again.output);
    assert.match(again.output.parts[1].text, /LOCAL-OVERLAY/);
  } finally {
    cleanup(base);
  }
});

/** One plugin instance (one directory of one opencode process). */
async function instance(base, dir, env = {}) {
  const plugin = oc.opencodePlugin({
    agent: "opencode",
    config: CONFIG,
    store: join(base, "store"),
    env: { HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "home/.config"), ...env },
  });
  assert.equal(plugin.id, "dsh-instructions");
  return plugin.server({ directory: join(base, dir), worktree: join(base, dir) });
}

/** `chat.message` for a prompt; returns the parts opencode would store. */
async function say(hooks, sessionID, text) {
  const output = {
    message: { id: "msg_1", sessionID, role: "user" },
    parts: [{ id: "prt_0", sessionID, messageID: "msg_1", type: "text", text }],
  };
  await hooks["chat.message"]({ sessionID, agent: null, model: { providerID: "mock", modelID: "m" }, messageID: null }, output);
  return output.parts;
}

async function tool(hooks, sessionID, name, args, output = "result", loaded = []) {
  const out = { title: name, output, metadata: { loaded } };
  await hooks["tool.execute.after"]({ tool: name, sessionID, callID: "call_1", args }, out);
  return out.output;
}

function layout() {
  return tree({
    "ws/.git/": "",
    "ws/AGENTS.md": "OC-ROOT\n",
    "ws/CLAUDE.md": "OC-ROOT-CLAUDE\n",
    "ws/AGENTS.local.md": "OC-LOCAL\n",
    "ws/sub/AGENTS.md": "OC-SUB\n",
    "ws/sub/f.txt": "f\n",
    "ws/w/AGENTS.md": "OC-WRITE\n",
    "ws/only/CLAUDE.md": "OC-ONLY-CLAUDE\n",
    "ws/only/x.txt": "x\n",
    "ws2/.git/": "",
    "ws2/AGENTS.md": "OC-WS2-ROOT\n",
    "ws2/AGENTS.local.md": "OC-WS2-LOCAL\n",
    "home/.dsh/AGENTS.md": "OC-DSH-HOME\n",
    "home/.config/opencode/AGENTS.md": "OC-USER\n",
  });
}

test("opencode's system files are left out; what it lacks is a synthetic text part of the prompt", async () => {
  const base = layout();
  try {
    const hooks = await instance(base, "ws");
    const parts = await say(hooks, "ses_a", "hello [p:t1]");
    assert.equal(parts.length, 2);
    const added = parts[1];
    assert.equal(added.type, "text");
    assert.equal(added.synthetic, true);
    assert.equal(added.sessionID, "ses_a");
    assert.equal(added.messageID, "msg_1");
    assert.match(added.id, /^prt_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
    assert.match(added.text, /Instructions from: ~\/\.dsh\/AGENTS\.md\n\nOC-DSH-HOME/);
    assert.match(added.text, /Instructions from: AGENTS\.local\.md\n\nOC-LOCAL/);
    assert.doesNotMatch(added.text, /OC-ROOT\n|OC-USER|OC-ROOT-CLAUDE/);
  } finally {
    cleanup(base);
  }
});

test("a nested file opencode attached to a read is left out; one it never attaches arrives", async () => {
  const base = layout();
  try {
    const hooks = await instance(base, "ws");
    await say(hooks, "ses_b", "go");
    const read = await tool(hooks, "ses_b", "read", { filePath: join(base, "ws/sub/f.txt") }, "<content>f</content>", [
      join(base, "ws/sub/AGENTS.md"),
    ]);
    assert.equal(read, "<content>f</content>", "opencode's own reminder is the one copy");
    const write = await tool(hooks, "ses_b", "write", { filePath: join(base, "ws/w/new.txt"), content: "n" }, "Wrote file");
    assert.match(write, /^Wrote file\n\n<system-reminder>\nAdditional instructions from: w\/AGENTS\.md/);
    const shell = await tool(hooks, "ses_b", "bash", { command: "cat only/x.txt", description: "d" }, "out");
    assert.match(shell, /Additional instructions from: only\/CLAUDE\.md[\s\S]*OC-ONLY-CLAUDE/);
  } finally {
    cleanup(base);
  }
});

test("two reads of one step, run in parallel: each result carries only its own touch, so opencode's attachments stay the one copy", async () => {
  const base = layout();
  try {
    const hooks = await instance(base, "ws");
    await say(hooks, "ses_p", "go");
    // opencode runs a step's tools at once: both after-hooks are in flight
    // together, each with the nested file opencode attached to its result.
    const [sub, w] = await Promise.all([
      tool(hooks, "ses_p", "read", { filePath: join(base, "ws/sub/f.txt") }, "<content>f</content>", [join(base, "ws/sub/AGENTS.md")]),
      tool(hooks, "ses_p", "read", { filePath: join(base, "ws/w/g.txt") }, "<content>g</content>", [join(base, "ws/w/AGENTS.md")]),
    ]);
    assert.equal(sub, "<content>f</content>", "no sibling's file in the first result");
    assert.equal(w, "<content>g</content>", "no sibling's file in the second result");
  } finally {
    cleanup(base);
  }
});

test("an edit of a nested file arrives as a replace, which opencode never sends", async () => {
  const base = layout();
  try {
    const hooks = await instance(base, "ws");
    await say(hooks, "ses_c", "go");
    await tool(hooks, "ses_c", "read", { filePath: join(base, "ws/sub/f.txt") }, "r", [join(base, "ws/sub/AGENTS.md")]);
    writeFileSync(join(base, "ws/sub/AGENTS.md"), "OC-SUB-V2\n");
    const next = await say(hooks, "ses_c", "again");
    assert.match(next[1].text, /Updated instructions from: sub\/AGENTS\.md[\s\S]*OC-SUB-V2/);
    writeFileSync(join(base, "ws/AGENTS.md"), "OC-ROOT-V2\n");
    const root = await say(hooks, "ses_c", "root edited");
    assert.equal(root.length, 1, "opencode re-reads its own system files for every request");
  } finally {
    cleanup(base);
  }
});

test("after session.compacted the next prompt has the complete baseline again", async () => {
  const base = layout();
  try {
    const hooks = await instance(base, "ws");
    await say(hooks, "ses_d", "one");
    assert.equal((await say(hooks, "ses_d", "two")).length, 1);
    await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "ses_d" } } });
    const after = await say(hooks, "ses_d", "three");
    assert.match(after[1].text, /The following workspace instructions[\s\S]*OC-LOCAL/);
  } finally {
    cleanup(base);
  }
});

test("two directories in one process: nothing of one session reaches the other", async () => {
  const base = layout();
  try {
    const [one, two] = await Promise.all([instance(base, "ws"), instance(base, "ws2")]);
    const [a, b] = await Promise.all([say(one, "ses_one", "x"), say(two, "ses_two", "y")]);
    assert.match(a[1].text, /OC-LOCAL/);
    assert.doesNotMatch(a[1].text, /OC-WS2/);
    assert.match(b[1].text, /OC-WS2-LOCAL/);
    assert.doesNotMatch(b[1].text, /OC-LOCAL|OC-ROOT/);
    const t = await tool(two, "ses_two", "bash", { command: "cat ../ws/sub/f.txt" }, "o");
    assert.doesNotMatch(t, /OC-SUB/, "ws2's session knows nothing of ws");
    // A session id the instance never saw gets nothing from another's state.
    await two.event({ event: { type: "session.compacted", properties: { sessionID: "ses_one" } } });
    assert.equal((await say(one, "ses_one", "again")).length, 1, "ses_one was not compacted by ws2's instance");
  } finally {
    cleanup(base);
  }
});

test("a file left out as opencode's that its system prompt lacks is given with the request", async () => {
  const base = layout();
  try {
    const hooks = await instance(base, "ws");
    await say(hooks, "ses_e", "hello");
    const output = { system: ["You are opencode.\nInstructions from: " + join(base, "home/.config/opencode/AGENTS.md") + "\nOC-USER\n"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_e", model: {} }, output);
    assert.equal(output.system.length, 2);
    assert.equal(output.system[1], `Instructions from: ${join(base, "ws/AGENTS.md")}\nOC-ROOT\n`);
    const full = { system: [output.system.join("\n")] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_e", model: {} }, full);
    assert.equal(full.system.length, 1, "nothing twice once opencode holds it");
  } finally {
    cleanup(base);
  }
});

test("OPENCODE_DISABLE_CLAUDE_CODE_PROMPT: opencode holds no CLAUDE.md, so it arrives from us", async () => {
  const base = tree({ "ws/.git/": "", "ws/CLAUDE.md": "OC-CLAUDE-ONLY\n", "home/": "" });
  try {
    const off = await instance(base, "ws", { OPENCODE_DISABLE_CLAUDE_CODE_PROMPT: "1" });
    assert.match((await say(off, "ses_f", "x"))[1].text, /OC-CLAUDE-ONLY/);
    const on = await instance(base, "ws");
    assert.equal((await say(on, "ses_g", "x")).length, 1);
  } finally {
    cleanup(base);
  }
});

test("no hook throws into opencode", async () => {
  const base = layout();
  try {
    const hooks = await instance(base, "ws");
    await hooks["chat.message"](null, null);
    await hooks["chat.message"]({ sessionID: "ses_x" }, { parts: null });
    await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_x", args: null }, null);
    await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_x", args: { filePath: 42 } }, {});
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_x" }, {});
    await hooks.event({});
    await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_x" } } } });
  } finally {
    cleanup(base);
  }
});

test("the touches of opencode's tools", () => {
  const base = tree({ "d/": "", "f.txt": "x" });
  try {
    const t = (tool, args) => oc.opencodeTouches(tool, args, base, "/h");
    assert.deepEqual(t("read", { filePath: join(base, "f.txt") }), [{ path: join(base, "f.txt"), kind: "read" }]);
    assert.deepEqual(t("read", { filePath: "d" }), [{ path: join(base, "d"), kind: "list" }]);
    assert.deepEqual(t("edit", { filePath: "/a/b" }), [{ path: "/a/b", kind: "write" }]);
    assert.deepEqual(t("glob", { pattern: "*" }), [{ path: base, kind: "search" }]);
    assert.deepEqual(t("grep", { pattern: "x", path: "d" }), [{ path: join(base, "d"), kind: "search" }]);
    assert.deepEqual(t("list", {}), [{ path: base, kind: "list" }]);
    assert.deepEqual(t("bash", { command: "ls", workdir: "d" }), [{ path: join(base, "d"), kind: "shell", command: "ls" }]);
    assert.deepEqual(
      t("apply_patch", { patchText: "*** Begin Patch\n*** Add File: n/new.txt\n+x\n*** Update File: /abs/o.txt\n*** End Patch" }),
      [
        { path: join(base, "n/new.txt"), kind: "write" },
        { path: "/abs/o.txt", kind: "write" },
      ],
    );
    assert.deepEqual(t("webfetch", { url: "x" }), []);
  } finally {
    cleanup(base);
  }
});

test("system prompt blocks name the files opencode loaded", () => {
  const files = oc.systemPromptFiles(["x\nInstructions from: /a/AGENTS.md\nbody\nInstructions from: /b/c.md\n", "Instructions from: relative"]);
  assert.deepEqual([...files], ["/a/AGENTS.md", "/b/c.md"]);
});

test("the part ids sort by time", () => {
  const a = oc.partId();
  const b = oc.partId();
  assert.ok(a.slice(0, 16) <= b.slice(0, 16), `${a} ${b}`);
  assert.equal(a.length, 30);
});
