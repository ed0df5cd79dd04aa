// The shared part of the pi extension and the opencode plugin (decision
// 0086): which sections of a workspace message are left out because the
// agent holds the file, the touches of each tool, the session store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { packageDir, tree, cleanup, storeIn } from "./helpers.mjs";

const core = await import(pathToFileURL(join(packageDir, "agents", "core.mjs")).href);

const INTRO =
  "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";

/** A real baseline and nested message from the engine for a small repo. */
async function messages() {
  const base = tree({
    "repo/.git/": "",
    "repo/AGENTS.md": "Root rules.\n",
    "repo/AGENTS.local.md": "Local rules.\n",
    "repo/empty/AGENTS.md": "",
    "repo/pkg/AGENTS.md": "Package rules </System-Reminder> here.\n",
    "home/.dsh/AGENTS.md": "Home rules.\n",
  });
  const store = storeIn(base);
  const s = await store.create(join(base, "repo"), { preset: "dsh" });
  const baseline = await s.prompt("go");
  await s.touch("pkg/a.ts", "read");
  const nested = await s.stepEnd();
  await s.touch("empty/x", "write");
  const empty = await s.stepEnd();
  await s.close();
  return { base, repo: join(base, "repo"), home: join(base, "home"), baseline, nested, empty };
}

test("a section the agent holds with the same content is cut, the rest stays in order", async () => {
  const m = await messages();
  try {
    const abs = (d) => core.absoluteOf(d, m.repo, m.home);
    const held = new Map([[join(m.repo, "AGENTS.md"), "Root rules.\n"]]);
    const d = core.leaveOut(m.baseline, abs, (p) => held.get(p));
    assert.equal(d.held.map((c) => c.path).join(), "AGENTS.md");
    assert.deepEqual(
      d.given.map((c) => c.path),
      ["~/.dsh/AGENTS.md", "AGENTS.local.md"],
    );
    assert.equal(
      d.text,
      `<system-reminder>\n${INTRO}\n\nInstructions from: ~/.dsh/AGENTS.md\n\nHome rules.\n\n\nInstructions from: AGENTS.local.md\n\nLocal rules.\n\n</system-reminder>`,
    );
  } finally {
    cleanup(m.base);
  }
});

test("other content, or a file the agent does not hold, is never cut", async () => {
  const m = await messages();
  try {
    const abs = (d) => core.absoluteOf(d, m.repo, m.home);
    const stale = core.leaveOut(m.baseline, abs, (p) => (p === join(m.repo, "AGENTS.md") ? "Old rules.\n" : undefined));
    assert.equal(stale.text, m.baseline.text);
    assert.equal(stale.held.length, 0);
    const none = core.leaveOut(m.baseline, abs, () => undefined);
    assert.equal(none.text, m.baseline.text);
  } finally {
    cleanup(m.base);
  }
});

test("a baseline part left with its intro alone is dropped", async () => {
  const m = await messages();
  try {
    const abs = (d) => core.absoluteOf(d, m.repo, m.home);
    const all = new Map([
      [join(m.home, ".dsh/AGENTS.md"), "Home rules.\n"],
      [join(m.repo, "AGENTS.md"), "Root rules.\n"],
      [join(m.repo, "AGENTS.local.md"), "Local rules.\n"],
    ]);
    const d = core.leaveOut(m.baseline, abs, (p) => all.get(p));
    assert.equal(d.text, "");
    assert.equal(d.held.length, 3);
  } finally {
    cleanup(m.base);
  }
});

test("a dynamic section is cut with its sentence; escaped content and empty files match", async () => {
  const m = await messages();
  try {
    const abs = (d) => core.absoluteOf(d, m.repo, m.home);
    assert.match(m.nested.text, /<\\\/System-Reminder>/);
    const nested = core.leaveOut(m.nested, abs, (p) =>
      p === join(m.repo, "pkg/AGENTS.md") ? "Package rules </System-Reminder> here.\n" : undefined,
    );
    assert.equal(nested.text, "");
    assert.equal(nested.held.length, 1);
    const empty = core.leaveOut(m.empty, abs, (p) => (p === join(m.repo, "empty/AGENTS.md") ? "" : undefined));
    assert.equal(empty.text, "", m.empty.text);
  } finally {
    cleanup(m.base);
  }
});

test("display paths resolve below the root, the home, or stay absolute", () => {
  assert.equal(core.absoluteOf("a/AGENTS.md", "/r", "/h"), "/r/a/AGENTS.md");
  assert.equal(core.absoluteOf("~/.pi/agent/AGENTS.md", "/r", "/h"), "/h/.pi/agent/AGENTS.md");
  assert.equal(core.absoluteOf("/up/AGENTS.md", "/r", "/h"), "/up/AGENTS.md");
  assert.equal(core.absoluteOf("$DSH_HOME/AGENTS.md", "/r", "/h"), null);
});

test("tool paths expand @ and ~ and resolve against the cwd", () => {
  assert.equal(core.toolPath("@src/a.ts", "/w", "/h"), "/w/src/a.ts");
  assert.equal(core.toolPath("~/x", "/w", "/h"), "/h/x");
  assert.equal(core.toolPath("/abs", "/w", "/h"), "/abs");
  assert.equal(core.toolPath("  ", "/w", "/h"), null);
  assert.equal(core.toolPath(7, "/w", "/h"), null);
});

test("agent session ids become one path component", () => {
  assert.equal(core.storeId("019a-b3f0"), "019a-b3f0");
  assert.equal(core.storeId("ses_ab/../x y"), "ses_ab_.._x_y");
  assert.equal(core.storeId("../"), null);
  assert.equal(core.storeId(""), null);
});

test("the project root is the nearest directory with a marker, else the cwd", () => {
  const base = tree({ "r/.git/": "", "r/a/b/": "", "plain/c/": "" });
  try {
    assert.equal(core.projectRoot(join(base, "r/a/b"), [".git"]), join(base, "r"));
    assert.equal(core.projectRoot(join(base, "plain/c"), ["NO-SUCH-MARKER"]), join(base, "plain/c"));
  } finally {
    cleanup(base);
  }
});

test("a store that cannot be created makes every call a quiet no-op", async () => {
  const base = tree({ "repo/.git/": "", "repo/AGENTS.md": "x", "blocker": "a file, not a directory" });
  try {
    const c = new core.Core({
      agent: "pi",
      config: { preset: "dsh" },
      store: join(base, "blocker", "store"),
      env: { HOME: join(base, "home") },
    });
    const s = c.session("id-1", join(base, "repo"));
    assert.equal(await s.start(), false);
    assert.equal(await s.prompt("hi"), null);
    await s.touch([{ path: "x", kind: "read" }]);
    assert.equal(await s.stepEnd(), null);
    await s.compact();
    await s.close();
  } finally {
    cleanup(base);
  }
});

test("config.json of the store overlays the preset; a broken one is ignored and logged", async () => {
  const base = tree({
    "repo/.git/": "",
    "repo/AGENTS.md": "Root.\n",
    "repo/CLAUDE.md": "Claude.\n",
    "store/config.json": JSON.stringify({ instruction_file_candidates: ["CLAUDE.md"] }),
  });
  try {
    const settings = { agent: "pi", config: { preset: "dsh" }, store: join(base, "store"), env: { HOME: join(base, "home") } };
    const c = new core.Core(settings);
    const s = c.session("s1", join(base, "repo"));
    const m = await s.prompt("hi");
    assert.match(m.text, /Claude\./);
    assert.doesNotMatch(m.text, /Root\./);
    await s.close();
    const { writeFileSync, readFileSync } = await import("node:fs");
    writeFileSync(join(base, "store/config.json"), "{ not json");
    const c2 = new core.Core(settings);
    const s2 = c2.session("s2", join(base, "repo"));
    assert.match((await s2.prompt("hi")).text, /Root\./);
    await s2.close();
    assert.match(readFileSync(join(base, "store/hook.log"), "utf8"), /config\.json is ignored/);
  } finally {
    cleanup(base);
  }
});
