// The pi coding agent's extension (decision 0086). pi loads `AGENTS.md` /
// `CLAUDE.md` itself — the first of four names per directory, from the cwd up
// to `/`, and its user file — once, at start, into its system prompt, and
// nothing else; no setting switches that off. So its own loading stays on:
// the extension composes pi's files with everything else, and leaves out of
// what it gives every section pi holds with the same content
// (`systemPromptOptions.contextFiles`). What pi lacks arrives: the `.local.md`
// overlays, `$DSH_HOME/AGENTS.md`, nested files on every kind of touch, set /
// replace / remove (a file pi loaded and that changed since, too), the
// complete baseline after compaction, rules.
//
// Where it lands: after the prompt, a custom message (`before_agent_start`,
// kept in the session); after a tool, appended to its result (`tool_result`,
// kept until compaction). Nothing here ever throws into pi: a `tool_call`
// handler that throws breaks the tool, and the others would print errors.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative, isAbsolute, resolve } from "node:path";

import { Core, type Settings, type Touch, type ToolRule, type AgentSession, leaveOut, readText, touchesByRule } from "./core.mjs";

/**
 * The configuration pi sessions start from (the pi profile of
 * `dsh-instructions`' profile table, which `hook install --agent pi`
 * writes into the extension it installs): pi's own names, first-wins per
 * directory, above the project root too, and its user file; the default
 * `.local.md` overlays and `$DSH_HOME/AGENTS.md` on top.
 */
// Kept equal to `hook_preset(Agent::Pi)` by a test of the installer
// (tests/in_process.rs reads this JSON).
export const PI_CONFIG: Record<string, unknown> = {
  "preset": "dsh",
  "max_bytes": 65536,
  "instruction_file_candidates": ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"],
  "ancestor_instruction_files": ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"],
  "user_instruction_files": ["~/.pi/agent/AGENTS.md", "~/.pi/agent/AGENTS.MD", "~/.pi/agent/CLAUDE.md", "~/.pi/agent/CLAUDE.MD"],
  "shell_tools": { "bash": ["command"] }
};

/**
 * `config` with pi's user files where pi reads them: `PI_CODING_AGENT_DIR`
 * moves them (a directory outside the home cannot be named by a `~/`
 * path; pi still loads its file there, the extension then only leaves
 * nothing out of it).
 */
export function piConfig(config: Record<string, unknown>, env: Record<string, string | undefined>, home: string): Record<string, unknown> {
  const dir = env.PI_CODING_AGENT_DIR?.trim();
  const files = config.user_instruction_files;
  if (!dir || !Array.isArray(files)) return config;
  const rel = relative(home, resolve(home, dir.startsWith("~/") ? dir.slice(2) : dir));
  const inside = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  const moved = files
    .filter((f): f is string => typeof f === "string")
    .map((f) => (f.startsWith("~/.pi/agent/") ? (inside ? `~/${rel}/${f.slice("~/.pi/agent/".length)}` : null) : f))
    .filter((f): f is string => f !== null);
  return { ...config, user_instruction_files: moved };
}

/** The custom type of everything the extension keeps in a pi session. */
export const CUSTOM_TYPE = "dsh-instructions";

/** pi's own names, in its order (`loadContextFileFromDir`). */
const PI_NAMES = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

/** The parts of pi's extension API used here (pi 0.73). */
export interface PiApi {
  on(event: string, handler: (event: any, ctx: PiContext) => unknown): void;
  appendEntry(customType: string, data?: unknown): void;
}

/** The parts of pi's handler context used here. */
export interface PiContext {
  cwd: string;
  sessionManager: {
    getSessionId(): string;
    getBranch(): PiEntry[];
  };
}

/** A session entry (pi's `session.jsonl` line). */
export interface PiEntry {
  type: string;
  id: string;
  customType?: string;
  data?: unknown;
  firstKeptEntryId?: string;
}

/** What the extension records in pi's session (`appendEntry`, never sent to the model). */
export interface PiRecord {
  /** A compaction the engine was told of (its entry id). */
  compacted?: string;
  /** Files pi loads itself whose sections we gave anyway (they differed). */
  given?: string[];
  /** Files pi loads itself whose removal we gave. */
  removed?: string[];
}

/** What pi's built-in tools touch (others touch nothing). */
const PI_TOOLS: Record<string, ToolRule> = {
  read: { kind: "read", path: "path" },
  write: { kind: "write", path: "path" },
  edit: { kind: "write", path: "path" },
  grep: { kind: "search", path: "path", orCwd: true },
  find: { kind: "search", path: "path", orCwd: true },
  ls: { kind: "list", path: "path", orCwd: true },
  bash: { kind: "shell", command: "command" },
};

/** Touches of one pi tool call (the built-in tools; others touch nothing). */
export function piTouches(tool: string, input: any, cwd: string, home: string): Touch[] {
  return touchesByRule(PI_TOOLS, tool, input, cwd, home);
}

/**
 * Entries of the branch the model sees now: after the latest compaction,
 * from its first kept entry on (pi's `buildSessionContext`).
 */
function inContext(branch: PiEntry[]): PiEntry[] {
  let from = 0;
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i];
    if (e.type !== "compaction") continue;
    const kept = branch.findIndex((x) => x.id === e.firstKeptEntryId);
    from = kept === -1 ? i + 1 : kept;
    break;
  }
  return branch.slice(from);
}

function records(entries: PiEntry[]): PiRecord[] {
  return entries
    .filter((e) => e.type === "custom" && e.customType === CUSTOM_TYPE && e.data && typeof e.data === "object")
    .map((e) => e.data as PiRecord);
}

/** The latest compaction on the branch that no record says the engine was told of. */
export function untoldCompaction(branch: PiEntry[]): string | null {
  const last = branch.map((e) => e).reverse().find((e) => e.type === "compaction");
  if (!last) return null;
  const told = new Set(records(branch).map((r) => r.compacted));
  return told.has(last.id) ? null : last.id;
}

/** Files pi loads itself of which the model has a copy from us now. */
export function oursInContext(branch: PiEntry[]): Set<string> {
  const ours = new Set<string>();
  for (const r of records(inContext(branch))) {
    for (const p of r.given ?? []) ours.add(p);
    for (const p of r.removed ?? []) ours.delete(p);
  }
  return ours;
}

/**
 * A file outside the project that pi's first-wins leaves out of its
 * directory (`CLAUDE.md` beside an `AGENTS.md`): the engine composes both
 * names above the project root and in pi's user directory, pi only one.
 */
function shadowedOutside(abs: string, root: string): boolean {
  const rel = relative(root, abs);
  if (rel !== "" && !rel.startsWith("..") && !isAbsolute(rel)) return false;
  const at = PI_NAMES.indexOf(basename(abs));
  return at > 0 && PI_NAMES.slice(0, at).some((n) => existsSync(join(dirname(abs), n)));
}

/**
 * pi's extension factory for these settings (what `hook install --agent pi`
 * writes); without settings, the pi profile's configuration.
 */
export function piExtension(settings: Partial<Settings> = {}): (pi: PiApi) => void {
  return (pi: PiApi) => {
    const env = settings.env ?? process.env;
    const home = env.HOME || homedir();
    const core = new Core({ ...settings, agent: settings.agent ?? "pi", env, config: piConfig(settings.config ?? PI_CONFIG, env, home) });
    let session: AgentSession | null = null;
    // What pi put in its system prompt, by absolute path (the latest prompt's).
    let piHolds = new Map<string, string>();

    const safe =
      <T,>(what: string, f: (event: any, ctx: PiContext) => Promise<T>) =>
      async (event: any, ctx: PiContext): Promise<T | undefined> => {
        try {
          return await f(event, ctx);
        } catch (e) {
          core.log.error(`pi ${what}`, e);
          return undefined;
        }
      };

    const record = (r: PiRecord) => {
      try {
        pi.appendEntry(CUSTOM_TYPE, r);
      } catch (e) {
        core.log.error("pi appendEntry", e);
      }
    };

    /** A message without what pi holds; records what we gave of pi's own files. */
    const deliver = (message: Awaited<ReturnType<AgentSession["prompt"]>>, ctx: PiContext): string => {
      if (!message || !session) return "";
      const s = session;
      const ours = oursInContext(ctx.sessionManager.getBranch());
      const d = leaveOut(
        message,
        (display) => s.absolute(display),
        (abs) => {
          if (shadowedOutside(abs, s.root)) return readText(abs);
          return ours.has(abs) ? undefined : piHolds.get(abs);
        },
      );
      const mine = (c: { path: string; action: string }) => {
        const abs = s.absolute(c.path);
        return abs !== null && piHolds.has(abs) ? [abs] : [];
      };
      const given = d.given.filter((c) => c.action !== "remove").flatMap(mine);
      const removed = d.given.filter((c) => c.action === "remove").flatMap(mine);
      if (given.length || removed.length) record({ given, removed });
      return d.text;
    };

    const catchUp = async (ctx: PiContext) => {
      const untold = untoldCompaction(ctx.sessionManager.getBranch());
      if (untold && session) {
        await session.compact();
        record({ compacted: untold });
      }
    };

    pi.on(
      "session_start",
      safe("session_start", async (_event, ctx) => {
        await session?.close();
        session = core.session(ctx.sessionManager.getSessionId(), ctx.cwd);
        if (await session.start()) await catchUp(ctx);
      }),
    );

    pi.on(
      "before_agent_start",
      safe("before_agent_start", async (event, ctx) => {
        if (!session) return undefined;
        const files = event?.systemPromptOptions?.contextFiles;
        piHolds = new Map(
          Array.isArray(files)
            ? files.filter((f: any) => typeof f?.path === "string" && typeof f?.content === "string").map((f: any) => [f.path, f.content])
            : [],
        );
        await catchUp(ctx);
        const text = deliver(await session.prompt(typeof event?.prompt === "string" ? event.prompt : ""), ctx);
        return text ? { message: { customType: CUSTOM_TYPE, content: text, display: false } } : undefined;
      }),
    );

    pi.on(
      "tool_result",
      safe("tool_result", async (event, ctx) => {
        if (!session) return undefined;
        if (!event?.isError) await session.touch(piTouches(String(event?.toolName ?? ""), event?.input, ctx.cwd, core.home));
        const text = deliver(await session.stepEnd(), ctx);
        if (!text) return undefined;
        const content = Array.isArray(event?.content) ? event.content : [];
        return { content: [...content, { type: "text", text }] };
      }),
    );

    pi.on(
      "session_compact",
      safe("session_compact", async (_event, ctx) => {
        // After pi's print mode has shut the extension down, the next
        // process catches up (`untoldCompaction`).
        if (session) await catchUp(ctx);
      }),
    );

    pi.on(
      "session_tree",
      safe("session_tree", async (_event, _ctx) => {
        // Another branch: the messages the engine gave are not in it.
        await session?.compact();
      }),
    );

    pi.on(
      "session_shutdown",
      safe("session_shutdown", async () => {
        const s = session;
        session = null;
        await s?.close();
      }),
    );
  };
}

/** pi loads this file itself as an extension, too (`pi -e <this file>`). */
export default piExtension();
