import { type Settings, type Touch } from "./core.mjs";
/**
 * The configuration pi sessions start from (the pi profile of
 * `dsh-instructions`' profile table, which `hook install --agent pi`
 * writes into the extension it installs): pi's own names, first-wins per
 * directory, above the project root too, and its user file; the default
 * `.local.md` overlays and `$DSH_HOME/AGENTS.md` on top.
 */
export declare const PI_CONFIG: Record<string, unknown>;
/**
 * `config` with pi's user files where pi reads them: `PI_CODING_AGENT_DIR`
 * moves them (a directory outside the home cannot be named by a `~/`
 * path; pi still loads its file there, the extension then only leaves
 * nothing out of it).
 */
export declare function piConfig(config: Record<string, unknown>, env: Record<string, string | undefined>, home: string): Record<string, unknown>;
/** The custom type of everything the extension keeps in a pi session. */
export declare const CUSTOM_TYPE = "dsh-instructions";
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
/** Touches of one pi tool call (the built-in tools; others touch nothing). */
export declare function piTouches(tool: string, input: any, cwd: string, home: string): Touch[];
/** The latest compaction on the branch that no record says the engine was told of. */
export declare function untoldCompaction(branch: PiEntry[]): string | null;
/** Files pi loads itself of which the model has a copy from us now. */
export declare function oursInContext(branch: PiEntry[]): Set<string>;
/**
 * pi's extension factory for these settings (what `hook install --agent pi`
 * writes); without settings, the pi profile's configuration.
 */
export declare function piExtension(settings?: Partial<Settings>): (pi: PiApi) => void;
/** pi loads this file itself as an extension, too (`pi -e <this file>`). */
declare const _default: (pi: PiApi) => void;
export default _default;
