// opencode's plugin (decision 0086). opencode loads instruction files itself
// and no setting switches that off: its user file and the first name of
// `AGENTS.md` / `CLAUDE.md` / `CONTEXT.md` found from the directory up to the
// worktree (every copy of it) go into the system prompt, re-read for every
// request; its `read` tool appends the nested files of the read file's
// directories, once per session. So its own loading stays on: the plugin
// composes every file with the engine and leaves out what opencode holds
// with the same content. What opencode lacks arrives: the `.local.md`
// overlays, `$DSH_HOME/AGENTS.md`, the project's per-directory precedence,
// nested files on write, edit, shell, grep, glob and list, updates and
// removals of nested files, the complete baseline after compaction, rules.
//
// Where it lands: after the prompt, a text part of the user's message
// (`chat.message`, kept); after a tool, appended to its output
// (`tool.execute.after`, kept until compaction). One `opencode serve`
// process runs sessions of several directories, each through its own
// plugin instance, with module state shared: everything here lives in the
// instance and is keyed by session id, so nothing of one session reaches
// another. Nothing throws into opencode.
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

import { Core, type Settings, type Touch, type ToolRule, type AgentSession, leaveOut, readText, toolPath, touchesByRule } from "./core.mjs";

/**
 * The configuration opencode sessions start from (the opencode profile of
 * `dsh-instructions`' profile table, which `hook install --agent opencode`
 * writes into the plugin it installs): opencode's three names, first-wins
 * per directory (a superset of opencode's one name for the whole path),
 * the default `.local.md` overlays and `$DSH_HOME/AGENTS.md`; opencode's
 * user file stays its own (it re-reads it for every request).
 */
// Kept equal to `hook_preset(Agent::Opencode)` by a test of the installer
// (tests/in_process.rs reads this JSON).
export const OPENCODE_CONFIG: Record<string, unknown> = {
  "preset": "opencode",
  "max_bytes": 65536,
  "instruction_file_candidates": ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"],
  "local_instruction_file_candidates": ["AGENTS.local.md", "CLAUDE.local.md"],
  "shell_tools": { "bash": ["command"] }
};

/** What opencode's plugin loader is given (opencode 1.18). */
export interface PluginInput {
  directory: string;
  worktree?: string;
}

/** opencode's own names for project files, in its order (its `Instruction` service). */
function projectNames(env: Record<string, string | undefined>): string[] {
  return ["AGENTS.md", ...(flag(env.OPENCODE_DISABLE_CLAUDE_CODE_PROMPT) ? [] : ["CLAUDE.md"]), "CONTEXT.md"];
}

function flag(v: string | undefined): boolean {
  return v !== undefined && ["1", "true"].includes(v.trim().toLowerCase());
}

/** Every `name` from `start` up to `stop` (inclusive), nearest first. */
function findUp(name: string, start: string, stop: string): string[] {
  const found: string[] = [];
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const p = join(dir, name);
    if (existsSync(p)) found.push(p);
    if (dir === resolve(stop) || dirname(dir) === dir) break;
  }
  return found;
}

/**
 * The files opencode puts in its system prompt for a session in
 * `directory`: its user file (`<config>/AGENTS.md`, else
 * `~/.claude/CLAUDE.md`), then every copy of the first project name found
 * from the directory up to the worktree. Its config `instructions` are
 * learned from the system prompt itself (`observed`).
 */
export function opencodeSystemFiles(directory: string, worktree: string, env: Record<string, string | undefined>, home: string): string[] {
  const out: string[] = [];
  const config = join(env.XDG_CONFIG_HOME || join(home, ".config"), "opencode");
  const claude = !flag(env.OPENCODE_DISABLE_CLAUDE_CODE_PROMPT);
  for (const f of [join(config, "AGENTS.md"), ...(claude ? [join(home, ".claude", "CLAUDE.md")] : [])]) {
    if (existsSync(f)) {
      out.push(f);
      break;
    }
  }
  if (!flag(env.OPENCODE_DISABLE_PROJECT_CONFIG)) {
    for (const name of projectNames(env)) {
      const found = findUp(name, directory, worktree);
      if (found.length) {
        out.push(...found);
        break;
      }
    }
  }
  return out;
}

/** The paths of opencode's `Instructions from: <path>` blocks in a system prompt. */
export function systemPromptFiles(system: string[]): Set<string> {
  const out = new Set<string>();
  for (const s of system) {
    for (const m of s.matchAll(/^Instructions from: (\/.*)$/gm)) out.add(m[1]);
  }
  return out;
}

/** What opencode's tools touch, but `read` (a file or a directory) and a patch (the files it names). */
const OPENCODE_TOOLS: Record<string, ToolRule> = {
  write: { kind: "write", path: "filePath" },
  edit: { kind: "write", path: "filePath" },
  multiedit: { kind: "write", path: "filePath" },
  grep: { kind: "search", path: "path", orCwd: true },
  glob: { kind: "search", path: "path", orCwd: true },
  list: { kind: "list", path: "path", orCwd: true },
  bash: { kind: "shell", command: "command", workdir: "workdir" },
};

/** Touches of one opencode tool call. */
export function opencodeTouches(tool: string, args: any, cwd: string, home: string): Touch[] {
  switch (tool) {
    case "read": {
      const path = toolPath(args?.filePath, cwd, home);
      if (path === null) return [];
      let dir = false;
      try {
        dir = statSync(path).isDirectory();
      } catch {
        // a path that is gone touches its directory
      }
      return [{ path, kind: dir ? "list" : "read" }];
    }
    case "apply_patch":
    case "patch": {
      const text = String(args?.patchText ?? args?.patch ?? "");
      return [...text.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm)]
        .map((m) => toolPath((m[1] ?? m[2]).trim(), cwd, home))
        .filter((p): p is string => p !== null)
        .map((path) => ({ path, kind: "write" as const }));
    }
    default:
      return touchesByRule(OPENCODE_TOOLS, tool, args, cwd, home);
  }
}

// opencode's part ids: `prt_`, 12 hex digits of (ms * 4096 + counter), 14
// base62 characters; the store sorts parts by id.
let lastMs = 0;
let counter = 0;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export function partId(): string {
  const ms = Date.now();
  counter = ms === lastMs ? counter + 1 : 0;
  lastMs = ms;
  const n = BigInt(ms) * 4096n + BigInt(counter);
  let tail = "";
  for (let i = 0; i < 14; i++) tail += BASE62[Math.floor(Math.random() * 62)];
  return `prt_${n.toString(16).padStart(12, "0").slice(-12)}${tail}`;
}

/** One session's state in one plugin instance. */
interface State {
  session: AgentSession;
  /** System-prompt files we left out as opencode's (checked at every request). */
  leftOut: Set<string>;
  /** What the latest system prompt held. */
  observed: Set<string>;
  /**
   * The session's tool results, handled one at a time: opencode runs a
   * step's tools in parallel, and a result must carry only what its own
   * touch brought — else a sibling read's nested file, which opencode
   * attaches to that read's result itself, would arrive twice.
   */
  lane: Promise<void>;
}

/**
 * opencode's plugin for these settings (what `hook install --agent
 * opencode` writes); without settings, the opencode profile's
 * configuration.
 */
export function opencodePlugin(settings: Partial<Settings> = {}) {
  return {
    id: "dsh-instructions",
    server: async (input: PluginInput) => {
      const core = new Core({ ...settings, agent: settings.agent ?? "opencode", config: settings.config ?? OPENCODE_CONFIG });
      const env = settings.env ?? process.env;
      const directory = resolve(input?.directory ?? process.cwd());
      const worktree = resolve(input?.worktree && input.worktree !== "/" ? input.worktree : directory);
      const sessions = new Map<string, State>();

      const state = (id: unknown, create: boolean): State | null => {
        if (typeof id !== "string" || id === "") return null;
        let s = sessions.get(id);
        if (!s && create) {
          s = { session: core.session(id, directory), leftOut: new Set(), observed: new Set(), lane: Promise.resolve() };
          sessions.set(id, s);
        }
        return s ?? null;
      };

      const safe =
        <A extends unknown[]>(what: string, f: (...args: A) => Promise<void>) =>
        async (...args: A): Promise<void> => {
          try {
            await f(...args);
          } catch (e) {
            core.log.error(`opencode ${what}`, e);
          }
        };

      /** A message without what opencode holds: its system files and `attached`. */
      const deliver = (s: State, message: Awaited<ReturnType<AgentSession["prompt"]>>, attached: string[]): string => {
        if (!message) return "";
        const system = new Set([...opencodeSystemFiles(directory, worktree, env, core.home), ...s.observed]);
        const fresh = new Set(attached.map((p) => resolve(directory, p)));
        const d = leaveOut(
          message,
          (display) => s.session.absolute(display),
          (abs) => (system.has(abs) || fresh.has(abs) ? (readText(abs) ?? undefined) : undefined),
        );
        for (const c of d.held) {
          const abs = s.session.absolute(c.path);
          if (abs !== null && system.has(abs)) s.leftOut.add(abs);
        }
        return d.text;
      };

      return {
        "chat.message": safe("chat.message", async (hook: any, output: any) => {
          const s = state(hook?.sessionID, true);
          if (!s) return;
          const prompt = (Array.isArray(output?.parts) ? output.parts : [])
            .filter((p: any) => p?.type === "text" && typeof p.text === "string" && !p.synthetic)
            .map((p: any) => p.text)
            .join("\n");
          const text = deliver(s, await s.session.prompt(prompt), []);
          if (!text || !Array.isArray(output?.parts)) return;
          const messageID = output?.message?.id ?? hook?.messageID ?? output.parts[0]?.messageID;
          output.parts.push({ id: partId(), sessionID: hook.sessionID, messageID, type: "text", text, synthetic: true });
        }),

        "tool.execute.after": safe("tool.execute.after", async (hook: any, output: any) => {
          const s = state(hook?.sessionID, true);
          if (!s || !output) return;
          const mine = s.lane.then(async () => {
            await s.session.touch(opencodeTouches(String(hook?.tool ?? ""), hook?.args, directory, core.home));
            const loaded = Array.isArray(output?.metadata?.loaded) ? output.metadata.loaded.filter((p: unknown) => typeof p === "string") : [];
            const text = deliver(s, await s.session.stepEnd(), loaded);
            if (text) output.output = `${typeof output.output === "string" ? output.output : ""}\n\n${text}`;
          });
          // The next result waits for this one, never for its failure.
          s.lane = mine.catch(() => undefined);
          await mine;
        }),

        // Never less than opencode alone: a file left out as opencode's
        // that its system prompt does not hold after all is given here,
        // for this request (current content, not kept).
        "experimental.chat.system.transform": safe("system.transform", async (hook: any, output: any) => {
          const s = state(hook?.sessionID, false);
          if (!s || !Array.isArray(output?.system)) return;
          const present = systemPromptFiles(output.system);
          s.observed = present;
          for (const abs of s.leftOut) {
            if (present.has(abs)) continue;
            const text = readText(abs);
            if (text) output.system.push(`Instructions from: ${abs}\n${text}`);
          }
        }),

        event: safe("event", async ({ event }: any) => {
          const id = event?.properties?.sessionID ?? event?.properties?.info?.id;
          if (event?.type === "session.compacted") {
            // A process may compact a session it never prompted in (`opencode serve`
            // answering the TUI's or the API's `/compact`): open it to record that.
            await state(id, true)?.session.compact();
          } else if (event?.type === "session.deleted") {
            const s = state(id, false);
            sessions.delete(id);
            await s?.session.close();
          }
        }),
      };
    },
  };
}

/** opencode loads this file itself as a plugin, too (its `plugin` list). */
export default opencodePlugin();
