import { type Settings, type Touch } from "./core.mjs";
/**
 * The configuration opencode sessions start from (the opencode profile of
 * `dsh-instructions`' profile table, which `hook install --agent opencode`
 * writes into the plugin it installs): opencode's three names, first-wins
 * per directory (a superset of opencode's one name for the whole path),
 * the default `.local.md` overlays and `$DSH_HOME/AGENTS.md`; opencode's
 * user file stays its own (it re-reads it for every request).
 */
export declare const OPENCODE_CONFIG: Record<string, unknown>;
/** What opencode's plugin loader is given (opencode 1.18). */
export interface PluginInput {
    directory: string;
    worktree?: string;
}
/**
 * The files opencode puts in its system prompt for a session in
 * `directory`: its user file (`<config>/AGENTS.md`, else
 * `~/.claude/CLAUDE.md`), then every copy of the first project name found
 * from the directory up to the worktree. Its config `instructions` are
 * learned from the system prompt itself (`observed`).
 */
export declare function opencodeSystemFiles(directory: string, worktree: string, env: Record<string, string | undefined>, home: string): string[];
/** The paths of opencode's `Instructions from: <path>` blocks in a system prompt. */
export declare function systemPromptFiles(system: string[]): Set<string>;
/** Touches of one opencode tool call. */
export declare function opencodeTouches(tool: string, args: any, cwd: string, home: string): Touch[];
export declare function partId(): string;
/**
 * opencode's plugin for these settings (what `hook install --agent
 * opencode` writes); without settings, the opencode profile's
 * configuration.
 */
export declare function opencodePlugin(settings?: Partial<Settings>): {
    id: string;
    server: (input: PluginInput) => Promise<{
        "chat.message": (hook: any, output: any) => Promise<void>;
        "tool.execute.after": (hook: any, output: any) => Promise<void>;
        "experimental.chat.system.transform": (hook: any, output: any) => Promise<void>;
        event: (args_0: any) => Promise<void>;
    }>;
};
/** opencode loads this file itself as a plugin, too (its `plugin` list). */
declare const _default: {
    id: string;
    server: (input: PluginInput) => Promise<{
        "chat.message": (hook: any, output: any) => Promise<void>;
        "tool.execute.after": (hook: any, output: any) => Promise<void>;
        "experimental.chat.system.transform": (hook: any, output: any) => Promise<void>;
        event: (args_0: any) => Promise<void>;
    }>;
};
export default _default;
