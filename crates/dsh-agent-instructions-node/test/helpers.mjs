// Shared by the tests: the package under test and scratch trees.
//
// DSH_NODE_PACKAGE names the package directory to test (`cargo xtask npm
// --test` points it at the copy installed from the tarballs); by default
// the package in this directory.
import { createRequire } from "node:module";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const packageDir = process.env.DSH_NODE_PACKAGE ?? join(here, "..");
const require = createRequire(join(packageDir, "package.json"));
export const lib = require(packageDir);

/** A scratch directory with `files` (path -> text; a trailing `/` is a directory). */
export function tree(files = {}) {
  const base = mkdtempSync(join(tmpdir(), "dsh-node-"));
  for (const [path, text] of Object.entries(files)) {
    const full = join(base, path);
    if (path.endsWith("/")) {
      mkdirSync(full, { recursive: true });
    } else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, text);
    }
  }
  return base;
}

/** A store in `base` whose sessions see `base/home` as HOME. */
export function storeIn(base, options = {}) {
  return new lib.SessionStore({
    dir: join(base, "sessions"),
    env: { HOME: join(base, "home") },
    ...options,
  });
}

export function cleanup(base) {
  rmSync(base, { recursive: true, force: true });
}

/** A repo with a root and a nested AGENTS.md. */
export function repo(extra = {}) {
  return tree({
    "repo/.git/": "",
    "repo/AGENTS.md": "Run the tests.",
    "repo/pkg/AGENTS.md": "Use pnpm.",
    "home/": "",
    ...extra,
  });
}

/**
 * A recorded agent payload (`test/fixtures/<agent>/<name>.json`, from the
 * agent harness's runs against the real agents) with its scrubbed
 * `/WORKSPACE` put back as `workspace`.
 */
export function fixture(agent, name, workspace) {
  const text = readFileSync(join(here, "fixtures", agent, `${name}.json`), "utf8");
  return JSON.parse(text.replaceAll("/WORKSPACE", JSON.stringify(workspace).slice(1, -1)));
}
