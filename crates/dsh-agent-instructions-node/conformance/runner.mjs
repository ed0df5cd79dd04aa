// The conformance scenarios (conformance/FORMAT.md) through the Node API,
// on the disk provider (R-NODE-6): a second runner of the same files,
// beside the Rust one (crates/dsh-instructions-conformance). It drives an
// `Instance` over the reference in-memory host, checks each step's
// `expect` itself, and returns what it observed step by step, in the shape
// the Rust runner's `steps_json` gives, so the two can be compared.
//
// Only what the disk provider runs is here: scenarios whose `providers`
// leave out `disk` are skipped, exactly as `cargo xtask conformance
// --provider disk` skips them (their faults, gates, stale sizes, kept
// versions and operation counts exist in memory only).
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import {
  mkdtempSync, mkdirSync, writeFileSync, rmSync, symlinkSync, realpathSync, readFileSync,
  readdirSync, statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import YAML from "yaml";

// ---------------------------------------------------------------- files

/** Every `*.yaml` under `root`, sorted as the Rust runner sorts paths. */
export function scenarioFiles(root) {
  const out = [];
  const walk = (p) => {
    if (statSync(p).isDirectory()) {
      for (const c of readdirSync(p).sort()) walk(join(p, c));
    } else if (p.endsWith(".yaml")) {
      out.push(p);
    }
  };
  walk(root);
  return out.sort();
}

/** A scenario with the format's defaults filled in. */
export function loadScenario(file) {
  const raw = YAML.parse(readFileSync(file, "utf8"));
  return {
    file,
    name: raw.name ?? basename(file, ".yaml"),
    providers: raw.providers ?? ["memory", "disk"],
    config: raw.disabled ? null : (raw.config ?? {}),
    noProvider: raw.no_provider === true,
    env: { HOME: raw.env?.HOME ?? "/home/user", DSH_HOME: raw.env?.DSH_HOME },
    trustedRoots: raw.trusted_roots,
    cwd: raw.cwd,
    fs: raw.fs ?? {},
    steps: raw.steps ?? [],
  };
}

// ------------------------------------------------------------- paths

function normalize(path) {
  const parts = [];
  for (const c of path.split("/")) {
    if (c === "" || c === ".") continue;
    if (c === "..") parts.pop();
    else parts.push(c);
  }
  return "/" + parts.join("/");
}

/** Scenario paths under a fresh temporary root `T`, and back. */
class PathMap {
  constructor(root) {
    this.root = root;
  }
  map(path) {
    if (typeof path !== "string" || !path.startsWith("/")) return path;
    const n = normalize(path);
    return n === "/" ? this.root : this.root + n;
  }
  unmap(text) {
    return text.includes(this.root)
      ? text.split(this.root + "/").join("/").split(this.root).join("/")
      : text;
  }
  /** Absolute paths inside a tool's string argument whose first component is one of `tops`. */
  mapInText(text, tops) {
    let out = "";
    let previous = null;
    const chars = [...text];
    let offset = 0;
    for (const c of chars) {
      const rest = text.slice(offset);
      const starts =
        c === "/" &&
        (previous === null || /\s/.test(previous) || "'\"=:(<>;|&`".includes(previous)) &&
        tops.some((top) => {
          if (!rest.startsWith(top)) return false;
          const next = rest.slice(top.length)[0];
          return next === undefined || !(/[\p{L}\p{N}]/u.test(next) || "_-.".includes(next));
        });
      if (starts) out += this.root;
      out += c;
      previous = c;
      offset += c.length;
    }
    return out;
  }
}

function unmapDeep(v, paths) {
  if (typeof v === "string") return paths.unmap(v);
  if (Array.isArray(v)) return v.map((x) => unmapDeep(x, paths));
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unmapDeep(x, paths)]));
  }
  return v;
}

// ------------------------------------------------------------ fixture

function entryBytes(value) {
  if (typeof value === "string") return Buffer.from(value, "utf8");
  if (value.text !== undefined) return Buffer.from(value.text, "utf8");
  if (value.bytes_hex !== undefined) return Buffer.from(value.bytes_hex, "hex");
  if (value.repeat !== undefined) {
    const unit = Buffer.from(value.repeat, "utf8");
    const out = Buffer.alloc(value.bytes);
    for (let i = 0; i < value.bytes; i++) out[i] = unit[i % unit.length];
    return out;
  }
  return null;
}

/** The scenario's tree on disk. */
class DiskFixture {
  constructor() {
    this.paths = new PathMap(realpathSync(mkdtempSync(join(tmpdir(), "dsh-conf-node-"))));
  }
  insert(path, value) {
    const target = this.paths.map(path);
    mkdirSync(dirname(target), { recursive: true });
    rmSync(target, { recursive: true, force: true });
    if (value === "dir") {
      mkdirSync(target);
    } else if (value && typeof value === "object" && value.link !== undefined) {
      symlinkSync(this.paths.map(value.link), target);
    } else if (value && typeof value === "object" && value.fifo === true) {
      execFileSync("mkfifo", ["-m", "644", target]);
    } else {
      const bytes = entryBytes(value);
      if (bytes === null) throw new Error(`fs entry ${path}: unknown value ${JSON.stringify(value)}`);
      writeFileSync(target, bytes);
    }
  }
  remove(path) {
    rmSync(this.paths.map(path), { recursive: true, force: true });
  }
  dispose() {
    rmSync(this.paths.root, { recursive: true, force: true });
  }
}

function scenarioTops(sc) {
  const written = sc.steps.flatMap((s) => (s.write ? Object.keys(s.write) : []));
  const all = [sc.cwd, ...Object.keys(sc.fs), ...written, ...(sc.trustedRoots ?? [])];
  const tops = new Set();
  for (const p of all) {
    if (!p.startsWith("/")) continue;
    const first = p.slice(1).split("/")[0];
    if (first && first !== "." && first !== "..") tops.add("/" + first);
  }
  return [...tops].sort();
}

// ------------------------------------------------------------ observed

/** A message in the Rust runner's shape (`ObservedMessage`). */
function observedMessage(m) {
  return m === null || m === undefined ? null : { parts: m.parts, source: observedSource(m.source) };
}

function observedSource(s) {
  return {
    baseline: s.baseline,
    identity: s.baselineIdentity ?? null,
    changes: s.changes.map((c) => ({
      action: c.action,
      scope: c.scope,
      path: c.path,
      previous_path: c.previousPath ?? null,
      digest: c.digest ?? null,
    })),
  };
}

// ------------------------------------------------------------- matcher

const INTRO_NORMAL =
  "The following workspace instructions come from instruction files in this environment. Follow them where they apply. Where two files conflict, the more specific one (later in this message) takes precedence. They do not override system, developer, or direct user instructions.";
const SUPERSEDE = "This complete workspace instruction baseline supersedes every earlier one. ";
const INTRO_EMPTY_REPLACEMENT =
  "This complete workspace instruction baseline supersedes every earlier one. No workspace instructions are active now.";
const INTRO_COMPACT = "Workspace instructions were shortened to fit the configured byte budget.";
const NOTICE_PREFIX = "Workspace instruction budget";
const SECTION_HEADERS = [
  "Instructions from: ",
  "Additional instructions from: ",
  "Updated instructions from: ",
  "Instructions removed: ",
];

const sectionLines = (text) => text.split("\n").filter((l) => SECTION_HEADERS.some((h) => l.startsWith(h)));

function body(part) {
  const open = "<system-reminder>\n";
  const close = "\n</system-reminder>";
  return part.startsWith(open) && part.endsWith(close) && part.length >= open.length + close.length
    ? part.slice(open.length, part.length - close.length)
    : part;
}

function noticeAndIntro(part) {
  const blocks = body(part).split("\n\n").filter((b) => b !== "");
  const first = blocks[0];
  const firstLine = first === undefined ? "" : first.split("\n")[0];
  let at = null;
  if (firstLine.startsWith(NOTICE_PREFIX)) at = 0;
  else if (firstLine.startsWith(SUPERSEDE) && firstLine.slice(SUPERSEDE.length).startsWith(NOTICE_PREFIX)) {
    at = SUPERSEDE.length;
  }
  return at === null ? [null, first] : [firstLine.slice(at), blocks[1]];
}

function classifyIntro(part) {
  const block = noticeAndIntro(part)[1];
  if (block === undefined) return "none";
  if (block === INTRO_NORMAL) return "normal";
  if (block === INTRO_EMPTY_REPLACEMENT) return "empty_replacement";
  if (block === INTRO_COMPACT) return "compact";
  if (block.startsWith(SUPERSEDE)) {
    const rest = block.slice(SUPERSEDE.length);
    if (rest === INTRO_NORMAL) return "replacement";
    if (rest === INTRO_COMPACT) return "replacement_compact";
    return "unrecognised";
  }
  return SECTION_HEADERS.some((h) => block.startsWith(h)) ? "none" : "unrecognised";
}

const sha1 = (text) => createHash("sha1").update(Buffer.from(text, "utf8")).digest("hex");
const json = (v) => JSON.stringify(v === undefined ? null : v);
const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** `digest` / `digest_of` of an expectation: undefined (not checked), null (absent) or hex. */
function expectedDigest(e) {
  if ("digest_of" in e) return e.digest_of === null ? null : sha1(e.digest_of);
  if ("digest" in e) return e.digest;
  return undefined;
}

function checkMessage(at, m, got, out) {
  const joined = got.parts.join("\n");
  const first = got.parts[0] ?? "";
  if ("text" in m && m.text !== joined) out.push(`${at}.text: expected ${json(m.text)}, got ${json(joined)}`);
  if ("sections" in m) {
    const s = sectionLines(joined);
    if (!eq(m.sections, s)) out.push(`${at}.sections: expected ${json(m.sections)}, got ${json(s)}`);
  }
  for (const s of m.contains ?? []) {
    if (!joined.includes(s)) out.push(`${at}.contains: ${json(s)} not found in ${json(joined)}`);
  }
  for (const s of m.not_contains ?? []) {
    if (joined.includes(s)) out.push(`${at}.not_contains: ${json(s)} found in ${json(joined)}`);
  }
  if ("intro" in m) {
    const g = classifyIntro(first);
    if (g !== m.intro) out.push(`${at}.intro: expected ${m.intro}, got ${g}`);
  }
  if ("notice" in m) {
    const g = noticeAndIntro(first)[0];
    if (m.notice !== g) out.push(`${at}.notice: expected ${json(m.notice)}, got ${json(g)}`);
  }
  if ("parts" in m && m.parts !== got.parts.length) {
    out.push(`${at}.parts: expected ${m.parts}, got ${got.parts.length}`);
  }
  if ("max_len" in m) {
    got.parts.forEach((p, i) => {
      const n = Buffer.byteLength(p, "utf8");
      if (n > m.max_len) out.push(`${at}.max_len: expected at most ${m.max_len}, got ${n} (part ${i})`);
    });
  }
  if ("len" in m) {
    if (got.parts.length !== 1) {
      out.push(`${at}.len: expected a single part of ${m.len} bytes, got ${got.parts.length} parts`);
    } else if (Buffer.byteLength(got.parts[0], "utf8") !== m.len) {
      out.push(`${at}.len: expected ${m.len}, got ${Buffer.byteLength(got.parts[0], "utf8")}`);
    }
  }
  if (m.source) checkSource(`${at}.source`, m.source, got.source, out);
}

function checkSource(at, exp, got, out) {
  if ("baseline" in exp && exp.baseline !== got.baseline) {
    out.push(`${at}.baseline: expected ${exp.baseline}, got ${got.baseline}`);
  }
  if ("identity" in exp) {
    if (exp.identity === "any") {
      if (got.identity === null) out.push(`${at}.identity: expected any, got absent`);
    } else if (exp.identity !== got.identity) {
      out.push(`${at}.identity: expected ${json(exp.identity)}, got ${json(got.identity)}`);
    }
  }
  if ("changes" in exp) {
    if (exp.changes.length !== got.changes.length) {
      out.push(`${at}.changes: expected ${exp.changes.length} entries, got ${got.changes.length} ${json(got.changes)}`);
      return;
    }
    exp.changes.forEach((e, i) => {
      const g = got.changes[i];
      const here = `${at}.changes[${i}]`;
      if ("action" in e && e.action !== g.action) out.push(`${here}.action: expected ${e.action}, got ${g.action}`);
      if ("path" in e && e.path !== g.path) out.push(`${here}.path: expected ${json(e.path)}, got ${json(g.path)}`);
      if ("previous_path" in e && e.previous_path !== g.previous_path) {
        out.push(`${here}.previous_path: expected ${json(e.previous_path)}, got ${json(g.previous_path)}`);
      }
      const d = expectedDigest(e);
      if (d !== undefined && d !== g.digest) out.push(`${here}.digest: expected ${json(d)}, got ${json(g.digest)}`);
      if ("scope" in e && e.scope !== g.scope) out.push(`${here}.scope: expected ${json(e.scope)}, got ${json(g.scope)}`);
    });
  }
}

/** The latest visible change naming `path` (per scope the last change wins). */
function visibleLookup(visible, path) {
  const latest = new Map();
  let seq = 0;
  for (const s of visible) {
    for (const c of s.changes) latest.set(c.scope, [seq++, c]);
  }
  let best = null;
  for (const [n, c] of latest.values()) {
    if (c.path === path && (best === null || n > best[0])) best = [n, c];
  }
  return best === null ? null : best[1];
}

function checkVisible(path, exp, visible, out) {
  const got = visibleLookup(visible, path);
  const describe = (c) =>
    c === null ? "none" : c.action === "remove" ? "removed" : `{action: ${c.action}, digest: ${c.digest ?? "absent"}}`;
  let ok;
  let want;
  if (exp === "none") {
    ok = got === null;
    want = "none";
  } else if (exp === "removed") {
    ok = got !== null && got.action === "remove";
    want = "removed";
  } else {
    const d = expectedDigest(exp);
    ok = got !== null && got.action !== "remove" && (!exp.action || exp.action === got.action) &&
      (d === undefined || d === got.digest);
    want = `{action: ${exp.action ?? "set|replace"}, digest: ${d ?? "any"}}`;
  }
  if (!ok) out.push(`visible[${json(path)}]: expected ${want}, got ${describe(got)}`);
}

/** Reasons `obs` does not meet `expect` (none: it does). */
export function check(expect, obs) {
  const out = [];
  if ("outcome" in expect) {
    if (obs.outcome === undefined) out.push("outcome: only a pre_step has an outcome");
    else if (obs.outcome !== expect.outcome) out.push(`outcome: expected ${expect.outcome}, got ${obs.outcome}`);
  }
  if ("batch" in expect) {
    if (obs.batch === undefined) out.push("batch: only a pre_step has a batch");
    else if (!eq(obs.batch, expect.batch)) out.push(`batch: expected ${json(expect.batch)}, got ${json(obs.batch)}`);
  }
  if ("entered" in expect) {
    const got = obs.entered ?? null;
    if (expect.entered === null && got !== null) {
      out.push(`entered: expected null, got a message ${json(got.parts.join("\n"))}`);
    } else if (expect.entered !== null && got === null) {
      out.push("entered: expected a message, got null");
    } else if (expect.entered !== null) {
      checkMessage("entered", expect.entered, got, out);
    }
  }
  if ("inbox" in expect) {
    if (expect.inbox.length !== obs.inbox.length) {
      out.push(`inbox: expected ${expect.inbox.length} message(s), got ${obs.inbox.length} ${json(obs.inbox.map((m) => m.parts.join("\n")))}`);
    } else {
      expect.inbox.forEach((m, i) => checkMessage(`inbox[${i}]`, m, obs.inbox[i], out));
    }
  }
  if ("history" in expect && !eq(expect.history, obs.history)) {
    out.push(`history: expected ${json(expect.history)}, got ${json(obs.history)}`);
  }
  for (const [path, v] of Object.entries(expect.visible ?? {})) checkVisible(path, v, obs.visible, out);
  // `reads` / `probes_max` count the memory provider's operations: a
  // scenario using them runs in memory only, never here.
  for (const k of ["reads", "probes_max"]) {
    if (k in expect) out.push(`${k}: no op counters on this provider`);
  }
  return out;
}

// -------------------------------------------------------------- running

function stepNumbers(step, next) {
  if ("pre_step" in step) {
    const number = step.pre_step?.step ?? next;
    return [number, number + 1];
  }
  if (step.event === "turn_end" || "resume" in step || "remount" in step) return [undefined, 1];
  return [undefined, next];
}

const ACTIONS = ["pre_step", "tool", "event", "write", "remove", "release", "blocked", "compact", "resume", "remount"];
const actionOf = (step) => ACTIONS.find((a) => a in step);

/**
 * Runs one scenario on disk through `lib` (the package). Resolves to
 * `{ ok, reason, steps }`: `steps` holds what each step observed, in the
 * Rust runner's `steps_json` shape.
 */
export async function runScenario(lib, sc) {
  const fixture = new DiskFixture();
  const paths = fixture.paths;
  const steps = [];
  let instance = null;
  try {
    for (const [path, value] of Object.entries(sc.fs)) fixture.insert(path, value);
    const mounting = { config: sc.config, env: sc.env, trustedRoots: sc.trustedRoots };
    const options = () => ({
      cwd: paths.map(sc.cwd),
      config: mounting.config === null
        ? null
        : { ...mounting.config, ...(mounting.config.dsh_home !== undefined ? { dsh_home: paths.map(mounting.config.dsh_home) } : {}) },
      env: {
        HOME: paths.map(mounting.env.HOME ?? "/home/user"),
        ...(mounting.env.DSH_HOME !== undefined ? { DSH_HOME: paths.map(mounting.env.DSH_HOME) } : {}),
      },
      trustedRoots: mounting.trustedRoots?.map((p) => paths.map(p)),
      fsTop: paths.map("/"),
      noProvider: sc.noProvider,
    });
    try {
      instance = await lib.Instance.mount(options());
    } catch (e) {
      return { ok: false, reason: `mount: ${e.message}`, steps };
    }
    const tops = scenarioTops(sc);
    let next = 1;
    for (const [i, step] of sc.steps.entries()) {
      const n = i + 1;
      const action = actionOf(step);
      const [number, after] = stepNumbers(step, next);
      next = after;
      const record = { index: i, action };
      if (number !== undefined) record.step_number = number;
      const at = (e) => `step ${n} (${action}): ${e}`;
      let pre;
      try {
        switch (action) {
          case "pre_step": {
            const p = step.pre_step ?? {};
            if (p.cancel_when_blocked !== undefined) throw new Error("cancel_when_blocked needs gates (memory only)");
            pre = await instance.preStep(number ?? 1, p.decision ?? "enter", p.claimed ?? ["prompt"], p.extra ?? []);
            record.outcome = pre.outcome;
            record.batch = pre.batch;
            record.entered = observedMessage(pre.entered);
            break;
          }
          case "tool": {
            const t = step.tool;
            await instance.toolResult({
              name: t.name,
              path: t.path === undefined ? undefined : paths.map(t.path),
              args: Object.fromEntries(Object.entries(t.args ?? {}).map(([k, v]) => [k, paths.mapInText(String(v), tops)])),
              token: t.token ?? `step-${n}`,
              parent: t.parent,
              ok: t.ok ?? true,
              cancelled: t.cancelled ?? false,
            });
            break;
          }
          case "event":
            await instance.sessionEvent(step.event);
            break;
          case "write":
            for (const [path, value] of Object.entries(step.write)) fixture.insert(path, value);
            break;
          case "remove":
            for (const path of step.remove) fixture.remove(path);
            break;
          case "release":
          case "blocked":
            throw new Error(`no gates on the disk provider (${action} ${step[action]})`);
          case "compact": {
            const c = step.compact;
            if (typeof c === "string") await instance.compact(c);
            else await instance.compact("hide", c.hide);
            break;
          }
          case "resume":
            await instance.resume();
            break;
          case "remount": {
            const r = step.remount ?? {};
            if (r.config !== undefined) mounting.config = r.config ?? {};
            if (r.env !== undefined) mounting.env = { HOME: r.env.HOME ?? "/home/user", DSH_HOME: r.env.DSH_HOME };
            if (r.trusted_roots !== undefined) mounting.trustedRoots = r.trusted_roots;
            await instance.remount(options());
            break;
          }
          default:
            throw new Error(`unknown step ${JSON.stringify(step)}`);
        }
        if (step.expect) {
          await instance.settle();
          const host = await instance.observe();
          record.inbox = host.inbox.map(observedMessage);
          record.history = host.history;
          record.visible = host.visible.map(observedSource);
        }
      } catch (e) {
        record.error = e.message;
        steps.push(unmapDeep(record, paths));
        return { ok: false, reason: at(e.message), steps };
      }
      const seen = unmapDeep(record, paths);
      steps.push(seen);
      if (!step.expect) continue;
      const reasons = check(step.expect, {
        outcome: seen.outcome,
        batch: seen.batch,
        entered: seen.entered,
        inbox: seen.inbox,
        history: seen.history,
        visible: seen.visible,
      });
      if (reasons.length > 0) return { ok: false, reason: at(reasons.join("; ")), steps };
    }
    return { ok: true, reason: null, steps };
  } finally {
    if (instance !== null) await instance.dispose().catch(() => {});
    fixture.dispose();
  }
}
