// Strict TypeScript over the generated index.d.ts: `cargo xtask npm --test`
// compiles this file with `tsc --strict --noEmit` against the installed
// package. It is never run; a type the declarations get wrong fails here.
import {
  SessionStore,
  Session,
  explain,
  preview,
  type WorkspaceMessage,
  type Inspection,
  type Preview,
  type Change,
  Instance,
  type PreStepOutcome,
  type HostState,
} from "dsh-agent-instructions";

async function turn(store: SessionStore, cwd: string, signal: AbortSignal): Promise<string[]> {
  const session: Session = await store.create(cwd, { preset: "claude", config: { max_bytes: 4096 }, trust: [] }, signal);
  const first: WorkspaceMessage | null = await session.prompt("hi", signal);
  const touched = await session.touch("src/a.ts", "read", { record: "keep" }, signal);
  await session.touch(".", "shell", { command: "cat a" });
  const entered = await session.stepEnd();
  const hidden: number[] = await session.compactWorkspace();
  const next = await session.previewNext(signal);
  const pending = await session.pending();
  const changes: Change[] = [first, touched, entered, next, pending].flatMap((m) => m?.source.changes ?? []);
  const actions: Array<"set" | "replace" | "remove"> = changes.map((c) => c.action);
  await session.close();
  const closed: boolean = session.closed;
  return [session.id, session.cwd, String(closed), String(hidden.length), ...actions, ...(first?.parts ?? [])];
}

async function inspect(cwd: string): Promise<number> {
  const env = { HOME: "/home/u", DSH_HOME: undefined };
  const i: Inspection = await explain(cwd, { env, preset: "codex" });
  const p: Preview = await preview(cwd, { env }, AbortSignal.timeout(1000));
  return i.candidates.filter((c) => c.fate.kind === "loaded").length + p.maxBytes + (p.notice?.length ?? 0);
}

const store = new SessionStore({ dir: "/tmp/sessions", env: process.env, lockWaitMs: 500 });
void turn(store, store.dir, new AbortController().signal);
void inspect("/tmp");

async function conformanceStep(cwd: string): Promise<string[]> {
  const instance: Instance = await Instance.mount({ cwd, config: { max_bytes: 1000 }, env: { HOME: "/h" }, fsTop: "/" });
  const r: PreStepOutcome = await instance.preStep(1, "enter", ["hi"], [], AbortSignal.timeout(1000));
  await instance.toolResult({ name: "read", path: "a.ts", token: "t1", ok: true });
  await instance.sessionEvent("turn_end");
  await instance.compact("hide", [0]);
  await instance.remount({ cwd, config: null });
  await instance.resume();
  await instance.settle();
  const state: HostState = await instance.observe();
  await instance.dispose();
  return [r.outcome, ...r.batch, ...state.history, String(state.visible.length), String(state.inbox.length)];
}
void conformanceStep("/tmp");
