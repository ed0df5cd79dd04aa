// What the pi extension and the opencode plugin share: one engine session per
// agent session (the binding's SessionStore under $DSH_HOME/hooks/<agent>),
// calls that never throw into the agent and never hold it up for long, the
// touches a tool call makes, and the sections of a workspace message the agent
// already holds itself, which are left out (R-HOOK-11, decision 0086).
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";

import type { Change, Session, SessionStore, WorkspaceMessage } from "../index.js";

/** A touch a tool call made: `path` absolute or relative to the session cwd. */
export interface Touch {
  path: string;
  kind: "read" | "write" | "list" | "search" | "shell";
  /** A shell touch's command line, exactly as it ran. */
  command?: string;
}

/** How an integration was installed (the file `hook install` writes passes it). */
export interface Settings {
  /** `pi` or `opencode`: names the store, the log and the messages. */
  agent: string;
  /**
   * The hook preset: configuration keys (`preset` and its differences),
   * laid under `config.json` of the store.
   */
  config: Record<string, unknown>;
  /**
   * The integration's directory: `$DSH_HOME/hooks/<agent>` of the
   * environment by default, as the hook's. Its `config.json` (if any)
   * overlays `config` for new sessions, errors go to its `hook.log`, and
   * the sessions live in its `sessions/` (R-HOOK-10).
   */
  store?: string;
  /** Longest wait for one engine call, in milliseconds (default 3,000). */
  timeoutMs?: number;
  /** Longest wait for another process's session lock (default 1,000). */
  lockWaitMs?: number;
  /** The environment the homes come from (default the process's). */
  env?: Record<string, string | undefined>;
}

type Binding = typeof import("../index.js");

const requireHere = createRequire(import.meta.url);
let binding: Binding | null | undefined;

/** The binding, loaded once; `null` when it cannot load (no addon). */
function loadBinding(log: Log): Binding | null {
  if (binding === undefined) {
    try {
      binding = requireHere("../index.js") as Binding;
    } catch (e) {
      binding = null;
      log.error("the engine could not be loaded; instructions come from the agent alone", e);
    }
  }
  return binding;
}

/** The DSH home of an environment (R-HOME): `$DSH_HOME`, else `~/.dsh`. */
export function dshHome(env: Record<string, string | undefined>): string {
  const set = env.DSH_HOME?.trim();
  if (set) return resolve(set);
  return join(env.HOME || homedir(), ".dsh");
}

/** Errors go to `<store>/hook.log` (one line each, the file bounded), never to the agent. */
export class Log {
  constructor(private readonly file: string) {}

  error(what: string, e?: unknown): void {
    const detail = e === undefined ? "" : `: ${e instanceof Error ? `${(e as { code?: string }).code ?? e.name} ${e.message}` : String(e)}`;
    const line = `${new Date().toISOString()} ${what}${detail}\n`;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      try {
        if (statSync(this.file).size > 1 << 20) renameSync(this.file, `${this.file}.old`);
      } catch {
        // no log yet
      }
      appendFileSync(this.file, line);
    } catch {
      // A log that cannot be written must not break the agent.
    }
  }
}

/** The engine's escape of a frame's closing tag (R-REN-5). */
export function escapeFrame(text: string): string {
  return text.replace(/<\/(system-reminder)/gi, (_m, tag: string) => `<\\/${tag}`);
}

/** Lowercase hex SHA-1, as a change's `digest` (R-STATE-1). */
export function sha1(text: string): string {
  return createHash("sha1").update(text, "utf8").digest("hex");
}

const FRAME_OPEN = "<system-reminder>\n";
const FRAME_CLOSE = "\n</system-reminder>";
const SEP = "\n\n";
const HEADERS: Record<string, string[]> = {
  set: ["Instructions from: ", "Additional instructions from: "],
  replace: ["Instructions from: ", "Updated instructions from: "],
};
const BASELINE_HEADER = "Instructions from: ";
const INTROS = [
  "The following workspace instructions come from instruction files in this environment.",
  "This complete workspace instruction baseline supersedes every earlier one.",
];

/**
 * What the agent holds of one file right now: the text it put in front of
 * the model, or `undefined` when it holds none.
 */
export type Holds = (absolutePath: string) => string | undefined;

/** A message after the agent's own files were left out of it. */
export interface Delivery {
  /** The text to give the model; empty when nothing is left. */
  text: string;
  /** The changes whose sections stayed (what the model gets from us). */
  given: Change[];
  /** The changes whose sections were left out (the agent holds them). */
  held: Change[];
}

/**
 * `message` without the sections of files the agent itself holds with the
 * same content (the digest of the change equals the SHA-1 of what the agent
 * holds): a baseline, `set` or `replace` section whose exact text is found
 * is cut; a part left with nothing but its intro is dropped. Where a
 * section cannot be found exactly (a file cut by the budget, say) it stays:
 * a copy too many, never one too few (R-HOOK-8).
 */
export function leaveOut(
  message: WorkspaceMessage,
  resolvePath: (display: string) => string | null,
  holds: Holds,
): Delivery {
  const parts = message.parts.map((p) => p);
  const given: Change[] = [];
  const held: Change[] = [];
  for (const change of message.source.changes) {
    const abs = change.digest ? resolvePath(change.path) : null;
    const content = abs === null ? undefined : holds(abs);
    if (content === undefined || sha1(content) !== change.digest) {
      given.push(change);
      continue;
    }
    const headers = HEADERS[change.action] ?? [];
    let cut = false;
    for (let i = 0; i < parts.length && !cut; i++) {
      for (const header of headers) {
        const next = cutSection(parts[i], header + escapeFrame(change.path), escapeFrame(content), header === BASELINE_HEADER);
        if (next !== null) {
          parts[i] = next;
          cut = true;
          break;
        }
      }
    }
    (cut ? held : given).push(change);
  }
  const kept = parts.filter((p) => !emptyPart(p));
  return { text: kept.join("\n"), given, held };
}

/** A part whose body is empty, or only an intro (no section, no notice). */
function emptyPart(part: string): boolean {
  if (!part.startsWith(FRAME_OPEN) || !part.endsWith(FRAME_CLOSE)) return false;
  const body = part.slice(FRAME_OPEN.length, part.length - FRAME_CLOSE.length);
  return body === "" || (!body.includes(SEP) && INTROS.some((i) => body.startsWith(i)));
}

/**
 * `part` without the one section that starts with the line `header` (at
 * the start of a block) and ends with `content`; `null` when there is none.
 * A baseline section is header, blank line, content; a dynamic one has its
 * sentence in between (one paragraph).
 */
function cutSection(part: string, header: string, content: string, baseline: boolean): string | null {
  if (!part.startsWith(FRAME_OPEN) || !part.endsWith(FRAME_CLOSE)) return null;
  const body = part.slice(FRAME_OPEN.length, part.length - FRAME_CLOSE.length);
  const head = header + SEP;
  for (let at = body.indexOf(head); at !== -1; at = body.indexOf(head, at + 1)) {
    if (at !== 0 && !body.startsWith(SEP, at - SEP.length)) continue;
    let from = at + head.length;
    let stop: number;
    if (!baseline && content === "") {
      // An empty file's dynamic section is its header and sentence alone.
      const end = body.indexOf(SEP, from);
      stop = end === -1 ? body.length : end;
    } else {
      if (!baseline) {
        const end = body.indexOf(SEP, from);
        if (end === -1) continue;
        from = end + SEP.length;
      }
      if (!body.startsWith(content, from)) continue;
      stop = from + content.length;
    }
    if (stop !== body.length && !body.startsWith(SEP, stop)) continue;
    const rest =
      at !== 0
        ? body.slice(0, at - SEP.length) + body.slice(stop)
        : body.slice(stop === body.length ? stop : stop + SEP.length);
    return FRAME_OPEN + rest + FRAME_CLOSE;
  }
  return null;
}

/** The project root of `cwd` (R-DISC-1): the nearest directory holding a marker, else `cwd`. */
export function projectRoot(cwd: string, markers: string[]): string {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (markers.some((m) => existsSync(join(dir, m)))) return dir;
    if (dirname(dir) === dir) return resolve(cwd);
  }
}

/** A display path (R-REN) back to an absolute one: `~/…` below `home`, relative below `root`. */
export function absoluteOf(display: string, root: string, home: string): string | null {
  if (display.startsWith("~/")) return join(home, display.slice(2));
  if (display.startsWith("$")) return null;
  return isAbsolute(display) ? display : join(root, display);
}

/** Reads a file's text, or `undefined`. */
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** A `Promise` that never rejects: failures are logged and become `fallback`. */
async function quiet<T>(log: Log, what: string, fallback: T, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    log.error(what, e);
    return fallback;
  }
}

/** One agent session's engine session, opened on first use. */
export class AgentSession {
  private session: Promise<Session | null> | null = null;
  /** The project root of the session (for display paths). */
  readonly root: string;

  constructor(
    private readonly core: Core,
    readonly id: string,
    readonly cwd: string,
  ) {
    this.root = projectRoot(cwd, core.markers());
  }

  /**
   * The open session, opening (resume) or creating it the first time; one
   * that could not be opened (another process held its lock past the
   * wait, say) is tried again at the next call.
   */
  private open(): Promise<Session | null> {
    if (this.session) return this.session;
    const opening = this.core.openSession(this.id, this.cwd);
    this.session = opening;
    void opening.then((s) => {
      if (s === null && this.session === opening) this.session = null;
    });
    return opening;
  }

  private async call<T>(what: string, fallback: T, f: (s: Session, signal: AbortSignal) => Promise<T>): Promise<T> {
    const s = await this.open();
    if (!s || s.closed) return fallback;
    return quiet(this.core.log, `${what} (session ${this.id})`, fallback, () => f(s, AbortSignal.timeout(this.core.timeoutMs)));
  }

  /** Opens the session now (at the agent's session start). */
  async start(): Promise<boolean> {
    return (await this.open()) !== null;
  }

  /** A turn's first step; the message to give after the prompt. */
  prompt(text: string): Promise<WorkspaceMessage | null> {
    return this.call("prompt", null, (s, signal) => s.prompt(text, signal));
  }

  /** Records the touches of one tool call. */
  async touch(touches: Touch[]): Promise<void> {
    for (const t of touches) {
      await this.call("touch", null, (s, signal) =>
        s.touch(t.path, t.kind, t.kind === "shell" ? { command: t.command ?? "" } : null, signal),
      );
    }
  }

  /** The end of a tool step; the message to give after the tool results. */
  stepEnd(): Promise<WorkspaceMessage | null> {
    return this.call("stepEnd", null, (s, signal) => s.stepEnd(signal));
  }

  /** The agent compacted its history: the next composition is a complete baseline. */
  async compact(): Promise<void> {
    await this.call("compactWorkspace", [] as number[], (s, signal) => s.compactWorkspace(signal));
  }

  /** Closes the session (releasing its lock); a later call opens it again. */
  async close(): Promise<void> {
    const pending = this.session;
    this.session = null;
    const s = pending ? await pending : null;
    if (s && !s.closed) await quiet(this.core.log, `close (session ${this.id})`, undefined, () => s.close());
  }

  /** Resolves a display path of this session to an absolute one. */
  absolute(display: string): string | null {
    return absoluteOf(display, this.root, this.core.home);
  }
}

/** An agent session id as the store's session id: one path component. */
export function storeId(id: string): string | null {
  const clean = id.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[._-]+/, "");
  return clean === "" ? null : clean.slice(0, 128);
}

/** The engine for one integration: its store, configuration and log. */
export class Core {
  readonly log: Log;
  readonly timeoutMs: number;
  /** The OS home (for `~/` display paths). */
  readonly home: string;
  private readonly storeDir: string;
  private readonly env: Record<string, string | undefined>;
  private store: SessionStore | null | undefined;

  constructor(readonly settings: Settings) {
    this.env = settings.env ?? process.env;
    this.home = this.env.HOME || homedir();
    this.storeDir = settings.store ?? join(dshHome(this.env), "hooks", settings.agent);
    this.log = new Log(join(this.storeDir, "hook.log"));
    this.timeoutMs = settings.timeoutMs ?? 3000;
  }

  /** The configuration of new sessions: the preset under `config.json`. */
  config(): Record<string, unknown> {
    const file = join(this.storeDir, "config.json");
    const text = readText(file);
    if (text === undefined) return { ...this.settings.config };
    try {
      const user = JSON.parse(text) as unknown;
      if (user === null || typeof user !== "object" || Array.isArray(user)) throw new Error("not a JSON object");
      return { ...this.settings.config, ...(user as Record<string, unknown>) };
    } catch (e) {
      this.log.error(`${file} is ignored`, e);
      return { ...this.settings.config };
    }
  }

  /** The root markers of the configuration (R-CFG-5). */
  markers(): string[] {
    const m = this.config().project_root_markers;
    return Array.isArray(m) && m.every((x) => typeof x === "string") ? (m as string[]) : [".git"];
  }

  private openStore(): SessionStore | null {
    if (this.store === undefined) {
      const b = loadBinding(this.log);
      try {
        this.store = b
          ? new b.SessionStore({
              dir: join(this.storeDir, "sessions"),
              env: { HOME: this.env.HOME, DSH_HOME: this.env.DSH_HOME },
              lockWaitMs: this.settings.lockWaitMs ?? 1000,
            })
          : null;
      } catch (e) {
        this.log.error("no session store", e);
        this.store = null;
      }
    }
    return this.store;
  }

  /** Opens (resumes) or creates the session `id` at `cwd`; `null` on failure. */
  async openSession(agentId: string, cwd: string): Promise<Session | null> {
    const store = this.openStore();
    const id = storeId(agentId);
    if (!store || !id) return null;
    return quiet(this.log, `open session ${id}`, null, async () => {
      const signal = AbortSignal.timeout(this.timeoutMs + (this.settings.lockWaitMs ?? 1000));
      if (await store.exists(id, signal)) return store.open(id, signal);
      try {
        return await store.create(cwd, { id, config: this.config() }, signal);
      } catch (e) {
        if ((e as { code?: string }).code !== "ERR_DSH_CONFIG") throw e;
        this.log.error(`${join(this.storeDir, "config.json")} is ignored`, e);
        return store.create(cwd, { id, config: { ...this.settings.config } }, signal);
      }
    });
  }

  /** A new agent session handle (opened on first use). */
  session(id: string, cwd: string): AgentSession {
    return new AgentSession(this, id, cwd);
  }
}

/** Expands a tool's path argument as the agents do: `@` and `~` first. */
export function toolPath(raw: unknown, cwd: string, home: string): string | null {
  if (typeof raw !== "string") return null;
  let p = raw.trim();
  if (p.startsWith("@")) p = p.slice(1);
  if (p === "") return null;
  if (p === "~") return home;
  if (p.startsWith("~/")) p = join(home, p.slice(2));
  return isAbsolute(p) ? p : resolve(cwd, p);
}

/**
 * What one of an agent's tools touches: a path argument (`path`, absent or
 * not a string: `cwd` when `orCwd`, else no touch) and the kind, or a shell
 * command (`command`) run in `workdir` (absent: `cwd`).
 */
export type ToolRule =
  | { kind: "read" | "write" | "list" | "search"; path: string; orCwd?: boolean }
  | { kind: "shell"; command: string; workdir?: string };

/**
 * Touches of one tool call by its agent's table of `rules`: none for a tool
 * the table does not name.
 */
export function touchesByRule(
  rules: Record<string, ToolRule>,
  tool: string,
  args: any,
  cwd: string,
  home: string,
): Touch[] {
  const rule = Object.hasOwn(rules, tool) ? rules[tool] : undefined;
  if (rule === undefined) return [];
  if (rule.kind === "shell") {
    const command = args?.[rule.command];
    if (typeof command !== "string") return [];
    const path = rule.workdir === undefined ? cwd : (toolPath(args?.[rule.workdir], cwd, home) ?? cwd);
    return [{ path, kind: "shell", command }];
  }
  const path = toolPath(args?.[rule.path], cwd, home) ?? (rule.orCwd ? cwd : null);
  return path === null ? [] : [{ path, kind: rule.kind }];
}
