import { type Settings, type Touch } from "./core.mjs";
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
/** pi's extension factory for these settings (what `hook install --agent pi` writes). */
export declare function piExtension(settings: Settings): (pi: PiApi) => void;
