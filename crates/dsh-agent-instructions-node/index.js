// The package's entry: napi-rs's generated loader (native.js) picks this
// platform's prebuilt addon; where none is installed, the error names the
// platform and what to do (issue 47 item 6).
"use strict";

const TARGETS = [
  "linux-x64-gnu",
  "linux-arm64-gnu",
  "linux-x64-musl",
  "linux-arm64-musl",
  "darwin-x64",
  "darwin-arm64",
  "win32-x64-msvc",
  "win32-arm64-msvc",
];

function platform() {
  let abi = "";
  if (process.platform === "linux") {
    const report = typeof process.report?.getReport === "function" ? process.report.getReport() : null;
    abi = report && report.header && report.header.glibcVersionRuntime ? "-gnu" : "-musl";
  } else if (process.platform === "win32") {
    abi = "-msvc";
  }
  return `${process.platform}-${process.arch}${abi}`;
}

try {
  require("./native.js");
} catch (cause) {
  const here = platform();
  const built = TARGETS.includes(here);
  const error = new Error(
    built
      ? `dsh-agent-instructions: the prebuilt addon for ${here} is not installed ` +
          `(@dsh-agent-instructions/binding-${here}, an optional dependency). ` +
          "Reinstall without --omit=optional / --no-optional."
      : `dsh-agent-instructions: no prebuilt addon for ${here} ` +
          `(prebuilt for: ${TARGETS.join(", ")}). ` +
          "Build it from source: cargo xtask npm in the repository.",
  );
  error.code = "ERR_DSH_NO_BINARY";
  error.platform = here;
  error.cause = cause;
  throw error;
}
// A plain re-export, so `import { SessionStore } from "dsh-agent-instructions"`
// finds the names (Node reads them from native.js statically).
module.exports = require("./native.js");
