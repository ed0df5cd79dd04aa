import type { Change, Session, WorkspaceMessage } from "../index.js";
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
/** The DSH home of an environment (R-HOME): `$DSH_HOME`, else `~/.dsh`. */
export declare function dshHome(env: Record<string, string | undefined>): string;
/** Errors go to `<store>/hook.log` (one line each, the file bounded), never to the agent. */
export declare class Log {
    private readonly file;
    constructor(file: string);
    error(what: string, e?: unknown): void;
}
/** The engine's escape of a frame's closing tag (R-REN-5). */
export declare function escapeFrame(text: string): string;
/** Lowercase hex SHA-1, as a change's `digest` (R-STATE-1). */
export declare function sha1(text: string): string;
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
export declare function leaveOut(message: WorkspaceMessage, resolvePath: (display: string) => string | null, holds: Holds): Delivery;
/** The project root of `cwd` (R-DISC-1): the nearest directory holding a marker, else `cwd`. */
export declare function projectRoot(cwd: string, markers: string[]): string;
/** A display path (R-REN) back to an absolute one: `~/…` below `home`, relative below `root`. */
export declare function absoluteOf(display: string, root: string, home: string): string | null;
/** Reads a file's text, or `undefined`. */
export declare function readText(path: string): string | undefined;
/** One agent session's engine session, opened on first use. */
export declare class AgentSession {
    private readonly core;
    readonly id: string;
    readonly cwd: string;
    private session;
    /** The project root of the session (for display paths). */
    readonly root: string;
    constructor(core: Core, id: string, cwd: string);
    /**
     * The open session, opening (resume) or creating it the first time; one
     * that could not be opened (another process held its lock past the
     * wait, say) is tried again at the next call.
     */
    private open;
    private call;
    /** Opens the session now (at the agent's session start). */
    start(): Promise<boolean>;
    /** A turn's first step; the message to give after the prompt. */
    prompt(text: string): Promise<WorkspaceMessage | null>;
    /** Records the touches of one tool call. */
    touch(touches: Touch[]): Promise<void>;
    /** The end of a tool step; the message to give after the tool results. */
    stepEnd(): Promise<WorkspaceMessage | null>;
    /** The agent compacted its history: the next composition is a complete baseline. */
    compact(): Promise<void>;
    /** Closes the session (releasing its lock); a later call opens it again. */
    close(): Promise<void>;
    /** Resolves a display path of this session to an absolute one. */
    absolute(display: string): string | null;
}
/** An agent session id as the store's session id: one path component. */
export declare function storeId(id: string): string | null;
/** The engine for one integration: its store, configuration and log. */
export declare class Core {
    readonly settings: Settings;
    readonly log: Log;
    readonly timeoutMs: number;
    /** The OS home (for `~/` display paths). */
    readonly home: string;
    private readonly storeDir;
    private readonly env;
    private store;
    constructor(settings: Settings);
    /** The configuration of new sessions: the preset under `config.json`. */
    config(): Record<string, unknown>;
    /** The root markers of the configuration (R-CFG-5). */
    markers(): string[];
    private openStore;
    /** Opens (resumes) or creates the session `id` at `cwd`; `null` on failure. */
    openSession(agentId: string, cwd: string): Promise<Session | null>;
    /** A new agent session handle (opened on first use). */
    session(id: string, cwd: string): AgentSession;
}
/** Expands a tool's path argument as the agents do: `@` and `~` first. */
export declare function toolPath(raw: unknown, cwd: string, home: string): string | null;
/**
 * What one of an agent's tools touches: a path argument (`path`, absent or
 * not a string: `cwd` when `orCwd`, else no touch) and the kind, or a shell
 * command (`command`) run in `workdir` (absent: `cwd`).
 */
export type ToolRule = {
    kind: "read" | "write" | "list" | "search";
    path: string;
    orCwd?: boolean;
} | {
    kind: "shell";
    command: string;
    workdir?: string;
};
/**
 * Touches of one tool call by its agent's table of `rules`: none for a tool
 * the table does not name.
 */
export declare function touchesByRule(rules: Record<string, ToolRule>, tool: string, args: any, cwd: string, home: string): Touch[];
