//! The six real agents: pinned install from the npm registry into a cache,
//! each agent's endpoint configuration for the mock, the hook entries, and
//! one runner per agent that starts a session and resumes it.
//!
//! Facts about the agents (environment, flags, config shapes, resume) were
//! measured in `../shared/agent-harness/README.md`.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// An agent under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Agent {
    /// Claude Code.
    Claude,
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI (its "bring your own key" Chat Completions provider).
    Copilot,
    /// Qwen Code.
    Qwen,
    /// The pi coding agent (an extension on the Node binding, not a hook).
    Pi,
    /// opencode (a plugin on the Node binding, not a hook).
    Opencode,
    /// Cline CLI: its own cases only (`super::cline`).
    Cline,
}

impl Agent {
    /// All agents, in report order.
    pub(crate) const ALL: [Agent; 8] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::Qwen,
        Agent::Pi,
        Agent::Opencode,
        Agent::Cline,
    ];

    /// Agents that run their own cases only: Cline CLI gives context only
    /// after a tool call, resumes and compacts only in its terminal UI, so
    /// the shared cases' one-shot prompts prove nothing there; its cases
    /// (`cline.rs`) cover the same events.
    pub(crate) const OWN_CASES_ONLY: [Agent; 1] = [Agent::Cline];

    /// Whether a case (`only`: the one agent it is about) runs for this
    /// agent.
    pub(crate) fn runs(self, only: Option<Agent>) -> bool {
        if Agent::OWN_CASES_ONLY.contains(&self) {
            only == Some(self)
        } else {
            only.is_none_or(|x| x == self)
        }
    }

    /// The name used on the command line and by `dsh-instructions hook --agent`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Agent::Cline => "cline",
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
            Agent::Pi => "pi",
            Agent::Opencode => "opencode",
        }
    }

    /// Whether the integration is the Node binding's extension (pi) or
    /// plugin (opencode), running inside the agent, rather than the hook
    /// binary (decision 0088).
    pub(crate) fn in_process(self) -> bool {
        matches!(self, Agent::Pi | Agent::Opencode)
    }

    /// Parses `claude|codex|gemini|copilot|qwen`.
    pub(crate) fn parse(s: &str) -> Result<Agent> {
        Agent::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .with_context(|| {
                format!(
                    "unknown agent `{s}` (claude, codex, gemini, copilot, qwen, pi, opencode or cline)"
                )
            })
    }

    /// Text the agent's own instruction loading puts around a file; finding
    /// it means a native copy reached the model (R-HOOK-5).
    pub(crate) fn native_signatures(self) -> &'static [&'static str] {
        match self {
            Agent::Claude => &[
                "(project instructions, checked into the codebase)",
                "(user's private global instructions",
            ],
            Agent::Codex => &["# AGENTS.md instructions for"],
            Agent::Gemini => &["--- Context from:"],
            // The system prompt's `<custom_instruction>` blocks and the
            // reminder after a `view` (harness README, "Native instructions").
            Agent::Copilot => &["<custom_instruction>", "Custom instructions from "],
            // The end of its `--- Context from: <path> ---` heading for the
            // files it loads (QWEN.md, AGENTS.md): Qwen's own
            // `~/.qwen/output-language.md` comes with the same heading and
            // stays (it writes that file itself; not an instruction file).
            Agent::Qwen => &["AGENTS.md ---", "QWEN.md ---"],
            // pi's `# Project Context` section heads its files with
            // `## <absolute path>` (agents/pi.md, "Native instruction loading").
            Agent::Pi => &["Project-specific instructions and guidelines:"],
            // Its system prompt's blocks and the reminder after a `read`
            // (agents/opencode.md): `Instructions from: <absolute path>`,
            // which the adapter's relative headings never start with.
            Agent::Opencode => &["Instructions from: /"],
            // The heading of the `AGENTS.md` of its working directory in
            // its system prompt's `# Rules` (harness `agents/cline.md`).
            Agent::Cline => &["## Workspace AGENTS.md"],
        }
    }

    /// Whether the agent's own instruction loading stays on with the hook
    /// installed: Copilot CLI has no setting for it, only the
    /// `--no-custom-instructions` flag, so the hook gives only what Copilot
    /// does not load itself (decision 0067). Its native wrappers are then
    /// no sign of a double delivery; a file seen twice is.
    pub(crate) fn native_kept(self) -> bool {
        // pi and opencode have no switch for their own loading either
        // (agents/pi.md, agents/opencode.md): the extension and the plugin
        // leave out what the agent holds (decision 0088).
        matches!(
            self,
            Agent::Copilot | Agent::Pi | Agent::Opencode | Agent::Cline
        )
    }

    /// Text that proves a native copy where the hook is the only deliverer
    /// (R-HOOK-5): the native signatures, or none where native loading is
    /// kept on by design ([`Agent::native_kept`]).
    pub(crate) fn double_delivery_signatures(self) -> &'static [&'static str] {
        if self.native_kept() {
            &[]
        } else {
            self.native_signatures()
        }
    }

    /// Longest one agent invocation may take before it is killed.
    pub(crate) fn step_timeout(self) -> Duration {
        match self {
            // Node start-up dominates Gemini CLI (3–4 s per call, measured).
            Agent::Gemini => Duration::from_secs(150),
            // Copilot CLI can wait 60 s after `/compact` before it exits 0
            // ("a waited send timed out after 60000ms", measured): bounded
            // above that, so the measured hang passes and a real one fails
            // (decision 0069).
            Agent::Copilot => Duration::from_secs(100),
            // Node start-up and its bundle: 5–7 s per call (measured).
            Agent::Qwen => Duration::from_secs(120),
            // Node start-up and jiti's TypeScript load: 4–10 s per call
            // (agents/pi.md).
            Agent::Pi => Duration::from_secs(120),
            // One Bun process per call, 20–30 s on a loaded 2-core machine
            // (agents/opencode.md); `opencode serve` steps take two calls.
            Agent::Opencode => Duration::from_secs(180),
            // 5–21 s per new task, 10–16 s per TUI step (measured).
            Agent::Cline => Duration::from_secs(120),
            _ => Duration::from_secs(100),
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// `dsh_instructions_hooks::PART_GAP_ENV` (the xtask does not link the
/// hooks crate).
const PART_GAP_ENV: &str = "DSH_HOOK_PART_GAP_MS";

/// The pinned npm packages (the versions the harness measured).
pub(crate) const PACKAGES: [(&str, &str); 8] = [
    ("@anthropic-ai/claude-code", "2.1.328"),
    ("@openai/codex", "0.169.0"),
    ("@google/gemini-cli", "0.61.0"),
    // A loader: the program is its optional dependency
    // `@github/copilot-<os>-<arch>` (checked by `install`).
    ("@github/copilot", "1.0.102"),
    ("@qwen-code/qwen-code", "0.24.4"),
    ("@mariozechner/pi-coding-agent", "0.73.1"),
    // A loader too: the program is `opencode-<os>-<arch>`, an optional
    // dependency (checked by `install`).
    ("opencode-ai", OPENCODE_VERSION),
    // A Node wrapper around its Bun-compiled program (postinstall).
    ("cline", "3.0.65"),
];

/// Copilot CLI's platform package, the optional dependency holding the
/// program (`@github/copilot` alone does not run).
fn copilot_platform_package() -> String {
    let (os, arch) = crate::npm_util::npm_platform();
    format!("@github/copilot-{os}-{arch}")
}

/// The loaders' platform packages (optional dependencies holding the
/// programs), each with its loader's pinned version.
fn platform_packages() -> Vec<(String, &'static str)> {
    let (os, arch) = crate::npm_util::npm_platform();
    PACKAGES
        .iter()
        .filter_map(|(p, v)| match *p {
            "@github/copilot" => Some((copilot_platform_package(), *v)),
            "opencode-ai" => Some((format!("opencode-{os}-{arch}"), *v)),
            _ => None,
        })
        .collect()
}

/// Where the installed agents live.
#[derive(Debug, Clone)]
pub(crate) struct Installed {
    /// `<cache>/node_modules`.
    pub modules: PathBuf,
}

impl Installed {
    pub(crate) fn bin(&self, name: &str) -> PathBuf {
        self.modules.join(".bin").join(name)
    }

    /// pi's program: `node <this>` (its `bin` is a script).
    pub(crate) fn pi_cli(&self) -> PathBuf {
        self.modules
            .join("@mariozechner/pi-coding-agent/dist/cli.js")
    }

    /// opencode's program: the platform package's executable (the loader's
    /// `bin` copies it at postinstall, which npm may skip).
    pub(crate) fn opencode_bin(&self) -> PathBuf {
        let (os, arch) = crate::npm_util::npm_platform();
        self.modules
            .join(format!("opencode-{os}-{arch}"))
            .join("bin")
            .join("opencode")
    }

    /// Where Copilot CLI unpacks its bundle on first start (~235 MB,
    /// `$COPILOT_PKG_CACHE_HOME/pkg`): in the e2e cache, not in each run's
    /// throwaway HOME.
    pub(crate) fn copilot_pkg_cache(&self) -> PathBuf {
        self.modules.parent().map_or_else(
            || self.modules.join("copilot-pkg"),
            |c| c.join("copilot-pkg"),
        )
    }
}

/// The e2e cache: `${XDG_CACHE_HOME:-~/.cache}/dsh-e2e/agents`.
pub(crate) fn cache_dir() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?).join(".cache"),
    };
    Ok(base.join("dsh-e2e").join("agents"))
}

fn installed_version(modules: &Path, package: &str) -> Option<String> {
    let text = fs::read_to_string(modules.join(package).join("package.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["version"].as_str().map(str::to_owned)
}

/// The pinned Codex CLI's executable in the e2e cache, when that version is
/// installed there (`cargo xtask bench` compares against it, issue 35).
pub(crate) fn cached_codex() -> Option<PathBuf> {
    let modules = cache_dir().ok()?.join("node_modules");
    let (package, version) = PACKAGES.iter().find(|(p, _)| *p == "@openai/codex")?;
    let bin = Installed {
        modules: modules.clone(),
    }
    .bin("codex");
    (installed_version(&modules, package).as_deref() == Some(*version) && bin.exists())
        .then_some(bin)
}

/// Whether every pinned agent is in `cache` at its pinned version (then
/// `install` needs no registry).
pub(crate) fn all_cached(cache: &Path) -> bool {
    let modules = cache.join("node_modules");
    PACKAGES
        .iter()
        .all(|(p, v)| installed_version(&modules, p).as_deref() == Some(*v))
        && missing_programs(&modules).is_empty()
}

/// The loaders' optional platform packages not at the pinned version (npm
/// skips optional dependencies silently under `--omit=optional`).
fn missing_programs(modules: &Path) -> Vec<String> {
    platform_packages()
        .into_iter()
        .filter(|(p, v)| installed_version(modules, p).as_deref() != Some(*v))
        .map(|(p, _)| p)
        .collect()
}

/// Installs the pinned agents into `cache` unless every one is already there
/// at its pinned version (idempotent; no registry traffic then).
pub(crate) fn install(cache: &Path) -> Result<Installed> {
    let modules = cache.join("node_modules");
    let mut missing: Vec<String> = PACKAGES
        .iter()
        .filter(|(p, v)| installed_version(&modules, p).as_deref() != Some(*v))
        .map(|(p, v)| format!("{p}@{v}"))
        .collect();
    if missing.is_empty() {
        missing = missing_programs(&modules);
    }
    if !missing.is_empty() {
        fs::create_dir_all(cache)?;
        println!(
            "e2e: installing {} into {}",
            missing.join(" "),
            cache.display()
        );
        let all: Vec<String> = PACKAGES.iter().map(|(p, v)| format!("{p}@{v}")).collect();
        let status = Command::new("npm")
            .args(["install", "--prefix"])
            .arg(cache)
            .args(["--no-audit", "--no-fund", "--loglevel=error", "--no-save"])
            .args(&all)
            .stdin(Stdio::null())
            .status()
            .context("cannot run npm (needed to install the agents)")?;
        if !status.success() {
            bail!("npm install of the agents failed ({status})");
        }
        for (p, v) in PACKAGES {
            let got = installed_version(&modules, p);
            if got.as_deref() != Some(v) {
                bail!("after npm install, {p} is {got:?}, want {v}");
            }
        }
        let programs = missing_programs(&modules);
        if !programs.is_empty() {
            bail!(
                "after npm install, {} (the programs of Copilot CLI and opencode, optional \
dependencies) missing (npm configured to omit optional dependencies?)",
                programs.join(", ")
            );
        }
    }
    let installed = Installed {
        modules: modules.clone(),
    };
    // Copilot CLI unpacks its bundle on its first start: done here, outside
    // every timed step, into the e2e cache.
    let warm = Command::new(installed.bin("copilot"))
        .arg("--version")
        .env("COPILOT_PKG_CACHE_HOME", installed.copilot_pkg_cache())
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("cannot run copilot --version")?;
    if !warm.success() {
        bail!("`copilot --version` failed ({warm}): its bundle did not unpack");
    }
    // Claude Code's postinstall puts its native binary in place; npm may
    // skip install scripts, and the script is idempotent, so always run it.
    let script = modules.join("@anthropic-ai/claude-code/install.cjs");
    if script.exists() {
        let _ = Command::new("node")
            .arg(&script)
            .current_dir(modules.join("@anthropic-ai/claude-code"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    Ok(installed)
}

/// Paths of one scenario run.
#[derive(Debug, Clone)]
pub(crate) struct Dirs {
    /// The run's temp dir.
    pub run: PathBuf,
    /// The workspace (a git repository).
    pub ws: PathBuf,
    /// HOME of the agent (and of the hook: `~/.dsh` = `home/.dsh`).
    pub home: PathBuf,
    /// The agent's working directory (`ws` or below).
    pub cwd: PathBuf,
}

impl Dirs {
    /// The paths of a run in `run`: `run/ws`, `run/home`, and the cwd
    /// `cwd` relative to the workspace (`.`: the workspace itself).
    pub(crate) fn of_run(run: &Path, cwd: &str) -> Self {
        let ws = run.join("ws");
        Self {
            run: run.to_owned(),
            cwd: if cwd == "." { ws.clone() } else { ws.join(cwd) },
            home: run.join("home"),
            ws,
        }
    }

    /// `$CODEX_HOME`.
    pub(crate) fn codex_home(&self) -> PathBuf {
        self.home.join(".codex")
    }
}

/// Writes the agent's endpoint configuration for the mock on `port` (before
/// the hooks are merged in, as a user's own settings would be).
pub(crate) fn write_endpoint_config(agent: Agent, dirs: &Dirs, port: u16) -> Result<()> {
    match agent {
        // Claude Code takes its endpoint from the environment (see `env`);
        // its settings file starts empty.
        Agent::Claude => write_json(&dirs.home.join(".claude/settings.json"), &json!({})),
        Agent::Codex => {
            let ch = dirs.codex_home();
            fs::create_dir_all(&ch)?;
            // A known model slug, so Codex offers its apply_patch tool (an
            // unknown model gets no apply_patch at all); the provider is
            // still the mock.
            let toml = format!(
                "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\napproval_policy = \"never\"\n\
sandbox_mode = \"danger-full-access\"\nmodel_context_window = 200000\n\
model_auto_compact_token_limit = 100000\ncheck_for_update_on_startup = false\n\n\
[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\
wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\nrequest_max_retries = 0\n\
stream_max_retries = 0\n\n[analytics]\nenabled = false\n\n\
[features]\nplugins = false\napps = false\nremote_plugin = false\ntool_suggest = false\n"
            );
            fs::write(ch.join("config.toml"), toml)?;
            Ok(())
        }
        Agent::Gemini => write_json(
            &dirs.home.join(".gemini/settings.json"),
            &json!({
                "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false},
                "model": {"name": "gemini-2.5-flash"},
                // The base URL alone selects the "gateway" auth type, which
                // headless mode rejects (exit 41, measured).
                "security": {"auth": {"selectedType": "gemini-api-key"}}
            }),
        ),
        // Copilot CLI takes its provider from the environment (see
        // `command`); its user directory starts empty.
        Agent::Copilot => Ok(fs::create_dir_all(dirs.home.join(".copilot"))?),
        Agent::Cline => super::cline_run::write_endpoint_config(&dirs.home, port),
        Agent::Qwen => write_json(
            &dirs.home.join(".qwen/settings.json"),
            &json!({
                // OPENAI_* alone is not enough headless: the auth type is
                // pinned (harness README, "Qwen Code 0.24.4").
                "security": {"auth": {"selectedType": "openai"}},
                "model": {"name": "mock-model"},
                "general": {"enableAutoUpdate": false},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false}
            }),
        ),
        Agent::Pi => {
            let dir = dirs.home.join(".pi/agent");
            write_json(
                &dir.join("models.json"),
                &json!({"providers": {"mock": {
                    "baseUrl": format!("http://127.0.0.1:{port}/v1"),
                    "api": "openai-completions",
                    "apiKey": "sk-mock-000",
                    "models": [{"id": "mock-model", "name": "Mock", "reasoning": false,
                                "input": ["text"], "contextWindow": 200000, "maxTokens": 8192,
                                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}}),
            )?;
            write_json(
                &dir.join("settings.json"),
                &json!({
                    "defaultProvider": "mock", "defaultModel": "mock-model",
                    "defaultThinkingLevel": "off", "quietStartup": true,
                    "enableInstallTelemetry": false,
                    // keepRecentTokens 1: pi's default 20000 keeps all of a
                    // tiny session, so a compaction would drop nothing
                    // (agents/pi.md, "Run, resume, compaction").
                    "compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 1},
                    "retry": {"enabled": false},
                    // Every steer before the next call, none after the
                    // answer (agents/pi.md, surprise 5).
                    "steeringMode": "all"
                }),
            )
        }
        Agent::Opencode => {
            let cfg = dirs.home.join(".config/opencode");
            // opencode runs an npm install of its plugin package in every
            // config dir at start unless the dir is seeded so
            // (agents/opencode.md, "Offline configuration").
            fs::create_dir_all(cfg.join("node_modules"))?;
            let version = OPENCODE_VERSION;
            write_json(
                &cfg.join("package.json"),
                &json!({"dependencies": {"@opencode-ai/plugin": version}}),
            )?;
            write_json(
                &cfg.join("package-lock.json"),
                &json!({"lockfileVersion": 3,
                        "packages": {"": {"dependencies": {"@opencode-ai/plugin": version}}}}),
            )?;
            write_json(
                &cfg.join("opencode.json"),
                &json!({
                    "model": "mock/mock-model", "small_model": "mock/mock-model",
                    "autoupdate": false, "share": "disabled",
                    "provider": {"mock": {
                        "npm": "@ai-sdk/openai-compatible", "name": "Mock",
                        "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "sk-mock-000"},
                        "models": {"mock-model": {"name": "Mock Model", "tool_call": true,
                                                  "limit": {"context": 200000, "output": 8192}}}}}
                }),
            )
        }
    }
}

/// The pinned opencode version (its plugin package is seeded at it).
const OPENCODE_VERSION: &str = "1.18.33";

/// Gemini CLI's own loading of `AGENTS.md` (`context.fileName`), for the
/// native runs: by default it loads `GEMINI.md` only.
pub(crate) fn enable_gemini_agents_md(dirs: &Dirs) -> Result<()> {
    let path = dirs.home.join(".gemini/settings.json");
    let mut s = read_json(&path)?;
    s["context"] = json!({"fileName": ["AGENTS.md", "GEMINI.md"]});
    write_json(&path, &s)
}

fn write_json(path: &Path, v: &Value) -> Result<()> {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p)?;
    }
    fs::write(path, serde_json::to_string_pretty(v)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}

fn read_json(path: &Path) -> Result<Value> {
    let text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
}

/// How the hooks get into the agent's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookSetup {
    /// `dsh-instructions hook install --agent A --scope user` (R-HOOK-5).
    Installer,
    /// Entries written by this module, for a hook command that is not the
    /// product (the plumbing check's marker hook), or while the installer is
    /// not on this branch.
    Direct,
}

/// Merges hook entries running `command` into the agent's user settings in
/// `dirs.home`, and switches the agent's native instruction loading off, the
/// way the installer does (events and settings as measured in the harness).
pub(crate) fn write_hook_entries(agent: Agent, dirs: &Dirs, command: &str) -> Result<()> {
    match agent {
        Agent::Claude => {
            let path = dirs.home.join(".claude/settings.json");
            let mut s = read_json(&path)?;
            let h = |matcher: &str| json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 30}]}]);
            s["hooks"] = json!({
                "SessionStart": h(""),
                "UserPromptSubmit": h(""),
                "PostToolUse": h("Read|Write|Edit|MultiEdit|NotebookEdit|Grep|Glob|LS"),
            });
            s["claudeMdExcludes"] = json!([
                "**/CLAUDE.md",
                "**/AGENTS.md",
                "**/CLAUDE.local.md",
                "**/AGENTS.local.md"
            ]);
            write_json(&path, &s)
        }
        Agent::Codex => {
            let h = json!([{"hooks": [{"type": "command", "command": command, "timeout": 30}]}]);
            write_json(
                &dirs.codex_home().join("hooks.json"),
                &json!({"hooks": {"SessionStart": h, "UserPromptSubmit": h, "PostToolUse": h}}),
            )?;
            let cfg = dirs.codex_home().join("config.toml");
            let toml = fs::read_to_string(&cfg)?;
            // A top-level key: it must come before the first table.
            fs::write(&cfg, format!("project_doc_max_bytes = 0\n{toml}"))?;
            Ok(())
        }
        Agent::Gemini => {
            let path = dirs.home.join(".gemini/settings.json");
            let mut s = read_json(&path)?;
            let h = |matcher: &str| json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 30000}]}]);
            s["hooksConfig"] = json!({"enabled": true});
            s["hooks"] = json!({
                "SessionStart": h(""),
                "BeforeAgent": h(""),
                "AfterTool": h("read_file|write_file|replace|read_many_files|list_directory"),
                "PreCompress": h(""),
            });
            s["context"] = json!({"fileName": []});
            write_json(&path, &s)
        }
        Agent::Copilot => {
            // camelCase events carry no event name: each entry names it in
            // the hook's environment. Native loading has no setting, only
            // `--no-custom-instructions` (the session passes it for the
            // marker hook: `Session::native_off`).
            let events = [
                "sessionStart",
                "userPromptSubmitted",
                "preToolUse",
                "postToolUse",
            ];
            let hooks: serde_json::Map<String, Value> = events
                .iter()
                .map(|e| {
                    (
                        (*e).to_owned(),
                        json!([{"type": "command", "bash": command, "timeoutSec": 30,
                                "env": {MARKER_EVENT_ENV: e}}]),
                    )
                })
                .collect();
            write_json(
                &dirs.home.join(".copilot/hooks/e2e-marker.json"),
                &json!({"version": 1, "hooks": hooks}),
            )
        }
        Agent::Cline => super::cline_run::write_marker_hooks(&dirs.home, command),
        Agent::Qwen => {
            let path = dirs.home.join(".qwen/settings.json");
            let mut s = read_json(&path)?;
            let h = json!([{"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": 30}]}]);
            s["hooks"] = json!({"SessionStart": h, "UserPromptSubmit": h, "PostToolUse": h});
            // A name no file has: Qwen then loads no QWEN.md/AGENTS.md (an
            // empty list changes nothing, measured).
            s["context"] = json!({"fileName": ["E2E-NO-SUCH-FILE.md"]});
            write_json(&path, &s)
        }
        Agent::Pi | Agent::Opencode => bail!(
            "{agent} has no command hooks (its integration runs in its own process): \
the marker hook's plumbing check is for the hook agents"
        ),
    }
}

/// The hook environment entry that names a Copilot CLI event for the marker
/// hook (its camelCase payloads carry no event name).
pub(crate) const MARKER_EVENT_ENV: &str = "E2E_HOOK_EVENT";

/// Installs the product's hooks with its own installer.
pub(crate) fn run_installer(agent: Agent, dirs: &Dirs, bin: &Path) -> Result<()> {
    if agent.in_process() {
        bail!("{agent} has no hook to install: its integration is `inproc::install_product`'s");
    }
    let codex_home = dirs.codex_home();
    hook_install(
        bin,
        agent,
        &[],
        &dirs.home,
        &dirs.ws,
        &[("CODEX_HOME", &codex_home)],
    )
}

/// Runs `dsh-instructions hook install --agent A --scope user` and `extra`
/// as a person whose home is `home` does, in `ws`, with nothing of this
/// process's environment but `PATH` and `env`; a failure carries the
/// installer's own message.
pub(crate) fn hook_install(
    bin: &Path,
    agent: Agent,
    extra: &[String],
    home: &Path,
    ws: &Path,
    env: &[(&str, &Path)],
) -> Result<()> {
    let out = Command::new(bin)
        .args([
            "hook",
            "install",
            "--agent",
            agent.name(),
            "--scope",
            "user",
        ])
        .args(extra)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .envs(env.iter().copied())
        .current_dir(ws)
        .stdin(Stdio::null())
        .output()
        .context("cannot run dsh-instructions hook install")?;
    if !out.status.success() {
        bail!(
            "`dsh-instructions hook install --agent {agent} --scope user{}` failed ({}): {}",
            extra.iter().map(|a| format!(" {a}")).collect::<String>(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Whether `$CODEX_HOME/config.toml` holds persisted hook trust
/// (`[hooks.state."…"]`, written by an installer that can). Then the e2e runs
/// Codex without `--dangerously-bypass-hook-trust`, so the trust itself is
/// tested: Codex skips untrusted hooks silently.
pub(crate) fn codex_trust_persisted(dirs: &Dirs) -> bool {
    fs::read_to_string(dirs.codex_home().join("config.toml"))
        .is_ok_and(|t| t.contains("[hooks.state."))
}

/// Outcome of one agent invocation.
#[derive(Debug, Clone)]
pub(crate) struct StepRun {
    /// Exit code (`None`: killed at the timeout or by a signal).
    pub code: Option<i32>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Wall time.
    pub elapsed: Duration,
    /// Captured stdout.
    pub stdout: String,
    /// Last lines of stderr, for failure messages.
    pub stderr_tail: String,
}

/// One agent session: a first prompt starts it, later prompts resume it.
#[derive(Debug)]
pub(crate) struct Session {
    agent: Agent,
    installed: Installed,
    pub(crate) dirs: Dirs,
    port: u16,
    started: bool,
    /// Codex: pass `--dangerously-bypass-hook-trust` (no persisted trust).
    bypass_trust: bool,
    /// Claude, Copilot, Qwen: the `--session-id` we chose; Codex: the
    /// thread id it printed.
    id: Option<String>,
    steps: usize,
    /// Copilot CLI: pass `--no-custom-instructions` (its only switch for
    /// native loading; the marker hook's plumbing check sets it).
    pub(crate) native_off: bool,
}

/// A session id for Claude Code (`--session-id` wants a UUID); unique enough
/// from the clock and the pid, without a random-number dependency.
fn make_uuid(salt: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::time::SystemTime::now().hash(&mut h);
    std::process::id().hash(&mut h);
    salt.hash(&mut h);
    let a = h.finish();
    a.hash(&mut h);
    let b = h.finish();
    let x = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-4{}-8{}-{}",
        &x[0..8],
        &x[8..12],
        &x[13..16],
        &x[17..20],
        &x[20..32]
    )
}

impl Session {
    /// A session of `agent` in `dirs`, against the mock on `port`.
    pub(crate) fn new(agent: Agent, installed: &Installed, dirs: &Dirs, port: u16) -> Session {
        Session {
            agent,
            installed: installed.clone(),
            dirs: dirs.clone(),
            port,
            started: false,
            bypass_trust: !codex_trust_persisted(dirs),
            id: None,
            steps: 0,
            native_off: false,
        }
    }

    /// The environment of every agent process: nothing from the caller but
    /// PATH, so no real credentials or proxies leak in; HTTP(S)_PROXY points
    /// at the mock, which records and refuses any CONNECT.
    pub(crate) fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        let proxy = format!("http://127.0.0.1:{}", self.port);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.dirs.home)
            .env("TMPDIR", self.dirs.run.join("tmp"))
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .env("HTTPS_PROXY", &proxy)
            .env("HTTP_PROXY", &proxy)
            .env("https_proxy", &proxy)
            .env("http_proxy", &proxy)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .current_dir(&self.dirs.cwd);
        // The parts' finishing gap, when set, reaches the hook (measuring
        // its threshold, decision 0043).
        if let Some(gap) = std::env::var_os(PART_GAP_ENV) {
            c.env(PART_GAP_ENV, gap);
        }
        let base = format!("http://127.0.0.1:{}", self.port);
        match self.agent {
            Agent::Claude => {
                c.env("ANTHROPIC_BASE_URL", base)
                    .env("ANTHROPIC_API_KEY", "sk-ant-mock-000")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_TELEMETRY", "1")
                    .env("DISABLE_AUTOUPDATER", "1")
                    .env("DISABLE_ERROR_REPORTING", "1");
            }
            Agent::Codex => {
                c.env("CODEX_HOME", self.dirs.codex_home())
                    .env("MOCK_API_KEY", "mock-key");
            }
            Agent::Gemini => {
                c.env("GOOGLE_GEMINI_BASE_URL", base)
                    .env("GEMINI_API_KEY", "mock-key")
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
            }
            Agent::Copilot => {
                let home = &self.dirs.home;
                c.env("COPILOT_OFFLINE", "true")
                    .env("COPILOT_AUTO_UPDATE", "false")
                    .env("COPILOT_PROVIDER_BASE_URL", format!("{base}/v1"))
                    .env("COPILOT_PROVIDER_API_KEY", "sk-mock-000")
                    .env("COPILOT_MODEL", "gpt-4.1")
                    .env("COPILOT_PKG_CACHE_HOME", self.installed.copilot_pkg_cache())
                    .env("XDG_CACHE_HOME", home.join(".cache"))
                    .env("XDG_CONFIG_HOME", home.join(".config"))
                    .env("XDG_STATE_HOME", home.join(".local/state"));
            }
            Agent::Cline => super::cline_run::env(&mut c, &self.dirs.home),
            Agent::Qwen => {
                c.env("OPENAI_BASE_URL", format!("{base}/v1"))
                    .env("OPENAI_API_KEY", "sk-mock-000")
                    .env("OPENAI_MODEL", "mock-model")
                    .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1");
            }
            // Endpoints in `~/.pi/agent/models.json`; no update check, no
            // telemetry (agents/pi.md, "Offline endpoint").
            Agent::Pi => {
                c.env("PI_OFFLINE", "1")
                    .env("PI_SKIP_VERSION_CHECK", "1")
                    .env("PI_TELEMETRY", "0");
            }
            Agent::Opencode => {
                let home = &self.dirs.home;
                c.env("XDG_CONFIG_HOME", home.join(".config"))
                    .env("XDG_DATA_HOME", home.join(".local/share"))
                    .env("XDG_STATE_HOME", home.join(".local/state"))
                    .env("XDG_CACHE_HOME", home.join(".cache"))
                    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                    .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
                    .env("OPENCODE_DISABLE_SHARE", "1");
            }
        }
        c
    }

    /// The agent's process for `args` in this session's environment (the
    /// `opencode serve` and pi RPC drivers of `inproc.rs`).
    pub(crate) fn agent_command(&self) -> Command {
        match self.agent {
            Agent::Pi => {
                let mut c = self.command(Path::new("node"));
                c.arg(self.installed.pi_cli());
                c
            }
            Agent::Opencode => self.command(&self.installed.opencode_bin()),
            other => self.command(&self.installed.bin(other.name())),
        }
    }

    /// The agent.
    pub(crate) fn agent(&self) -> Agent {
        self.agent
    }

    /// The session's directories.
    pub(crate) fn dirs(&self) -> &Dirs {
        &self.dirs
    }

    /// The session id (pi's, opencode's), once the first step printed it.
    pub(crate) fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Marks the session started (a step run outside [`Session::prompt`]).
    pub(crate) fn set_started(&mut self) {
        self.started = true;
    }

    /// Counts a step run outside [`Session::prompt`] and names its files.
    pub(crate) fn next_label(&mut self) -> String {
        self.steps += 1;
        format!("{}-step{}", self.agent, self.steps)
    }

    /// The program and arguments for the next prompt: the first starts the
    /// session, later ones resume it.
    fn invocation(&mut self, text: &str) -> Result<(PathBuf, Vec<String>)> {
        let mut a: Vec<String> = Vec::new();
        let program = match self.agent {
            Agent::Claude => {
                a.extend(
                    [
                        "-p",
                        text,
                        "--output-format",
                        "json",
                        "--model",
                        "claude-sonnet-4-5",
                    ]
                    .map(String::from),
                );
                // Write/Edit in the workspace without asking; root may not
                // use the bypass mode.
                a.extend(["--permission-mode", "acceptEdits"].map(String::from));
                // The scripted shell calls (`[mock:shell=…]`) without a prompt.
                a.extend(["--allowedTools", "Bash"].map(String::from));
                self.session_flag(&mut a, false);
                self.installed.bin("claude")
            }
            Agent::Codex => {
                a.push("exec".into());
                let resume = if self.started {
                    let Some(id) = self.id.clone() else {
                        bail!("codex printed no thread id in its first step, cannot resume");
                    };
                    a.push("resume".into());
                    Some(id)
                } else {
                    None
                };
                a.push("--json".into());
                if self.bypass_trust {
                    a.push("--dangerously-bypass-hook-trust".into());
                }
                a.extend(resume);
                a.push(text.into());
                self.installed.bin("codex")
            }
            Agent::Gemini => {
                a.extend(["--output-format", "json", "--approval-mode", "yolo"].map(String::from));
                if self.started {
                    a.extend(["--resume", "latest"].map(String::from));
                }
                a.extend(["-p".to_owned(), text.to_owned()]);
                self.installed.bin("gemini")
            }
            Agent::Copilot => {
                a.extend(
                    ["-p", text, "--allow-all-tools", "--output-format", "json"].map(String::from),
                );
                a.push("--no-auto-update".into());
                a.push("--log-dir".into());
                a.push(self.dirs.run.join("copilot-logs").display().to_string());
                if self.native_off {
                    a.push("--no-custom-instructions".into());
                }
                self.session_flag(&mut a, text == "/compact");
                self.installed.bin("copilot")
            }
            // A new task; later prompts go through its terminal UI
            // (`Session::prompt`).
            Agent::Cline => {
                a.extend(["--json".to_owned(), text.to_owned()]);
                self.installed.bin("cline")
            }
            Agent::Qwen => {
                a.extend(["--approval-mode", "yolo", "--output-format", "json"].map(String::from));
                self.session_flag(&mut a, false);
                a.extend(["-p".to_owned(), text.to_owned()]);
                self.installed.bin("qwen")
            }
            Agent::Pi => {
                a.push(self.installed.pi_cli().display().to_string());
                a.extend(["--provider", "mock", "--model", "mock-model"].map(String::from));
                if self.started {
                    let Some(id) = self.id.clone() else {
                        bail!("pi printed no session header in its first step, cannot resume");
                    };
                    a.extend(["--session".to_owned(), id]);
                }
                a.extend(["--mode", "json", "-p", text].map(String::from));
                PathBuf::from("node")
            }
            Agent::Opencode => {
                a.extend(["run", "--format", "json", "-m", "mock/mock-model"].map(String::from));
                if self.started {
                    let Some(id) = self.id.clone() else {
                        bail!("opencode printed no session id in its first step, cannot resume");
                    };
                    a.extend(["--session".to_owned(), id]);
                } else {
                    // A titled session makes no title request
                    // (agents/opencode.md, "Title side request").
                    a.extend(["--title", "e2e"].map(String::from));
                }
                a.push(text.into());
                self.installed.opencode_bin()
            }
        };
        Ok((program, a))
    }

    /// `--session-id <new uuid>` to start, `--resume <it>` later;
    /// `--continue` (the only session) where `--resume` is worse: Copilot
    /// CLI's `/compact` hung 60 s after `--resume` in 2 of 2 runs, after
    /// `--continue` in 4 of 13 (harness README).
    fn session_flag(&mut self, a: &mut Vec<String>, continue_instead: bool) {
        if self.started {
            if continue_instead {
                a.push("--continue".into());
            } else {
                a.push("--resume".into());
                a.push(self.id.clone().unwrap_or_default());
            }
        } else {
            let id = make_uuid(&self.dirs.run);
            a.push("--session-id".into());
            a.push(id.clone());
            self.id = Some(id);
        }
    }

    /// Sends one prompt: the first starts the session, later ones resume it.
    pub(crate) fn prompt(&mut self, text: &str) -> Result<StepRun> {
        if self.agent == Agent::Cline && self.started {
            // Cline resumes only in its terminal UI (harness `cline.md`).
            self.steps += 1;
            let label = format!("{}-step{}", self.agent, self.steps);
            let id = match &self.id {
                Some(id) => id.clone(),
                None => super::cline_run::session_id(&self.dirs.home)?,
            };
            self.id = Some(id.clone());
            let program = self.installed.bin("cline");
            let c = self.command(&program);
            let t = super::cline_run::tui_step(
                c,
                &program,
                (&id, text),
                &self.dirs.run,
                &label,
                self.agent.step_timeout(),
            )?;
            return Ok(StepRun {
                code: t.code,
                timed_out: t.timed_out,
                elapsed: t.elapsed,
                stdout: t.screen,
                stderr_tail: t.tail,
            });
        }
        let (program, args) = self.invocation(text)?;
        let mut c = self.command(&program);
        c.args(&args);
        self.steps += 1;
        let label = format!("{}-step{}", self.agent, self.steps);
        let run = run_bounded(&mut c, &self.dirs.run, &label, self.agent.step_timeout())?;
        if !self.started {
            match self.agent {
                Agent::Codex => self.id = thread_id(&run.stdout),
                Agent::Pi => self.id = pi_session_id(&run.stdout),
                Agent::Opencode => self.id = opencode_session_id(&run.stdout),
                _ => {}
            }
        }
        self.started = true;
        Ok(run)
    }
}

/// The first string that `pick` finds in one of `stdout`'s JSON lines.
fn find_in_json_lines(stdout: &str, pick: impl Fn(&Value) -> Option<&str>) -> Option<String> {
    stdout.lines().find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        pick(&v).map(str::to_owned)
    })
}

/// The thread id in `codex exec --json` output (its `thread.started` event).
pub(crate) fn thread_id(stdout: &str) -> Option<String> {
    find_in_json_lines(stdout, |v| {
        (v["type"] == "thread.started").then(|| v["thread_id"].as_str())?
    })
}

/// The session id in pi's `--mode json` output: its first line is the
/// session header `{"type":"session","id":…}`.
pub(crate) fn pi_session_id(stdout: &str) -> Option<String> {
    find_in_json_lines(stdout, |v| {
        (v["type"] == "session").then(|| v["id"].as_str())?
    })
}

/// The session id in `opencode run --format json` output: every event
/// carries `sessionID`.
pub(crate) fn opencode_session_id(stdout: &str) -> Option<String> {
    find_in_json_lines(stdout, |v| v["sessionID"].as_str())
}

/// Runs a command with stdin closed, output captured in `dir/<label>.*`, in
/// its own process group, killed (the whole group) after `limit`.
pub(crate) fn run_bounded(
    c: &mut Command,
    dir: &Path,
    label: &str,
    limit: Duration,
) -> Result<StepRun> {
    use std::os::unix::process::CommandExt;
    let out_path = dir.join(format!("{label}.stdout"));
    let err_path = dir.join(format!("{label}.stderr"));
    c.stdin(Stdio::null())
        .stdout(fs::File::create(&out_path)?)
        .stderr(fs::File::create(&err_path)?)
        .process_group(0);
    let t0 = Instant::now();
    let mut child = c
        .spawn()
        .with_context(|| format!("cannot start {:?}", c.get_program()))?;
    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if t0.elapsed() > limit {
            timed_out = true;
            // The agent's own children (node shims, hooks) share its group.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    let stdout = fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    let tail: Vec<&str> = stderr.lines().rev().take(4).collect();
    Ok(StepRun {
        code: status.code(),
        timed_out,
        elapsed: t0.elapsed(),
        stdout,
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join(" | "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("claude", Agent::Claude)]
    #[case("codex", Agent::Codex)]
    #[case("gemini", Agent::Gemini)]
    #[case("copilot", Agent::Copilot)]
    #[case("qwen", Agent::Qwen)]
    #[case("pi", Agent::Pi)]
    #[case("opencode", Agent::Opencode)]
    fn names_round_trip(#[case] s: &str, #[case] a: Agent) {
        assert_eq!(Agent::parse(s).unwrap(), a);
        assert_eq!(a.to_string(), s);
    }

    #[test]
    fn the_cache_counts_only_with_copilots_platform_package() {
        let tmp = tempfile::tempdir().unwrap();
        let put = |package: &str, version: &str| {
            let d = tmp.path().join("node_modules").join(package);
            fs::create_dir_all(&d).unwrap();
            fs::write(
                d.join("package.json"),
                json!({"version": version}).to_string(),
            )
            .unwrap();
        };
        for (p, v) in PACKAGES {
            put(p, v);
        }
        assert!(
            !all_cached(tmp.path()),
            "the loader alone does not run Copilot CLI"
        );
        put(&copilot_platform_package(), "1.0.0");
        assert!(
            !all_cached(tmp.path()),
            "another version is not the pinned one"
        );
        put(&copilot_platform_package(), "1.0.102");
        assert!(
            !all_cached(tmp.path()),
            "opencode's loader alone does not run it either"
        );
        let (os, arch) = crate::npm_util::npm_platform();
        put(&format!("opencode-{os}-{arch}"), "1.18.33");
        assert!(all_cached(tmp.path()));
        put("@qwen-code/qwen-code", "0.24.3");
        assert!(!all_cached(tmp.path()));
    }

    #[test]
    fn session_ids_come_from_each_agents_output() {
        let pi = "{\"type\":\"session\",\"version\":3,\"id\":\"0199abc\",\"cwd\":\"/w\"}\n{\"type\":\"agent_start\"}\n";
        assert_eq!(pi_session_id(pi).as_deref(), Some("0199abc"));
        assert_eq!(pi_session_id("{\"type\":\"agent_start\"}\n"), None);
        let oc = "not json\n{\"type\":\"step_start\",\"sessionID\":\"ses_1\"}\n";
        assert_eq!(opencode_session_id(oc).as_deref(), Some("ses_1"));
        assert_eq!(opencode_session_id("{}\n"), None);
    }

    #[test]
    fn unknown_agent_is_an_error() {
        assert!(Agent::parse("cursor").is_err());
    }

    #[test]
    fn uuid_has_the_canonical_shape() {
        let u = make_uuid(Path::new("/x"));
        let parts: Vec<_> = u.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
        assert!(u.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));
    }

    fn dirs(root: &Path) -> Dirs {
        Dirs::of_run(root, ".")
    }

    #[rstest]
    #[case(Agent::Claude)]
    #[case(Agent::Codex)]
    #[case(Agent::Gemini)]
    #[case(Agent::Copilot)]
    #[case(Agent::Qwen)]
    #[case(Agent::Cline)]
    fn hook_entries_merge_into_the_endpoint_config(#[case] agent: Agent) {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        write_endpoint_config(agent, &d, 4242).unwrap();
        write_hook_entries(agent, &d, "/bin/dsh-instructions hook --agent x").unwrap();
        match agent {
            Agent::Claude => {
                let s = read_json(&d.home.join(".claude/settings.json")).unwrap();
                assert_eq!(
                    s["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
                    "/bin/dsh-instructions hook --agent x"
                );
                assert!(
                    s["claudeMdExcludes"]
                        .as_array()
                        .unwrap()
                        .contains(&json!("**/AGENTS.md"))
                );
            }
            Agent::Codex => {
                let toml = fs::read_to_string(d.codex_home().join("config.toml")).unwrap();
                assert!(toml.starts_with("project_doc_max_bytes = 0\n"));
                assert!(toml.contains("base_url = \"http://127.0.0.1:4242/v1\""));
                let h = read_json(&d.codex_home().join("hooks.json")).unwrap();
                assert!(h["hooks"]["SessionStart"].is_array());
            }
            Agent::Gemini => {
                let s = read_json(&d.home.join(".gemini/settings.json")).unwrap();
                assert_eq!(s["security"]["auth"]["selectedType"], "gemini-api-key");
                assert_eq!(s["hooks"]["AfterTool"][0]["hooks"][0]["timeout"], 30000);
                assert_eq!(s["context"]["fileName"], json!([]));
            }
            Agent::Copilot => {
                let h = read_json(&d.home.join(".copilot/hooks/e2e-marker.json")).unwrap();
                assert_eq!(h["version"], 1);
                let entry = &h["hooks"]["postToolUse"][0];
                assert_eq!(entry["bash"], "/bin/dsh-instructions hook --agent x");
                assert_eq!(entry["env"][MARKER_EVENT_ENV], "postToolUse");
            }
            Agent::Cline => {
                let p = read_json(&d.home.join(".cline/data/settings/providers.json")).unwrap();
                assert_eq!(
                    p["providers"]["openai-compatible"]["settings"]["baseUrl"],
                    "http://127.0.0.1:4242/v1"
                );
                let g =
                    read_json(&d.home.join(".cline/data/settings/global-settings.json")).unwrap();
                assert_eq!(g["telemetryOptOut"], true);
                let hook = fs::read_to_string(d.home.join(".cline/hooks/PreToolUse")).unwrap();
                assert!(
                    hook.contains("exec /bin/dsh-instructions hook --agent x"),
                    "{hook}"
                );
            }
            Agent::Qwen => {
                let s = read_json(&d.home.join(".qwen/settings.json")).unwrap();
                assert_eq!(s["security"]["auth"]["selectedType"], "openai");
                assert_eq!(s["hooks"]["PostToolUse"][0]["hooks"][0]["timeout"], 30);
                assert_eq!(s["context"]["fileName"], json!(["E2E-NO-SUCH-FILE.md"]));
            }
            Agent::Pi | Agent::Opencode => unreachable!("no command hooks"),
        }
    }

    /// pi and opencode: the mock as the one provider, no hook entries (their
    /// integration is no command), and opencode's config dir seeded so it
    /// installs nothing at start.
    #[test]
    fn in_process_agents_point_at_the_mock_and_take_no_hook_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        write_endpoint_config(Agent::Pi, &d, 4242).unwrap();
        let m = read_json(&d.home.join(".pi/agent/models.json")).unwrap();
        assert_eq!(
            m["providers"]["mock"]["baseUrl"],
            "http://127.0.0.1:4242/v1"
        );
        let s = read_json(&d.home.join(".pi/agent/settings.json")).unwrap();
        assert_eq!(s["defaultProvider"], "mock");
        assert_eq!(s["compaction"]["keepRecentTokens"], 1);
        write_endpoint_config(Agent::Opencode, &d, 4242).unwrap();
        let cfg = d.home.join(".config/opencode");
        let c = read_json(&cfg.join("opencode.json")).unwrap();
        assert_eq!(
            c["provider"]["mock"]["options"]["baseURL"],
            "http://127.0.0.1:4242/v1"
        );
        let lock = read_json(&cfg.join("package-lock.json")).unwrap();
        assert_eq!(
            lock["packages"][""]["dependencies"]["@opencode-ai/plugin"],
            OPENCODE_VERSION
        );
        assert!(cfg.join("node_modules").is_dir());
        for agent in [Agent::Pi, Agent::Opencode] {
            assert!(write_hook_entries(agent, &d, "/bin/x").is_err());
        }
    }

    #[test]
    fn sessions_start_then_resume_the_same_session() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        let inst = Installed {
            modules: tmp.path().join("nm"),
        };
        let mut claude = Session::new(Agent::Claude, &inst, &d, 1);
        let (_, first) = claude.invocation("a [p:t1]").unwrap();
        claude.started = true;
        let (_, second) = claude.invocation("b [p:t2]").unwrap();
        let at =
            |v: &[String], flag: &str| v.iter().position(|x| x == flag).map(|i| v[i + 1].clone());
        assert_eq!(at(&first, "--session-id"), at(&second, "--resume"));
        assert_eq!(at(&second, "-p").as_deref(), Some("b [p:t2]"));

        let mut codex = Session::new(Agent::Codex, &inst, &d, 1);
        assert!(
            codex.bypass_trust,
            "no persisted trust in an empty CODEX_HOME"
        );
        let (_, first) = codex.invocation("a").unwrap();
        assert_eq!(
            first,
            ["exec", "--json", "--dangerously-bypass-hook-trust", "a"]
        );
        codex.started = true;
        assert!(codex.invocation("b").is_err(), "no thread id, no resume");
        codex.id = thread_id(
            "{\"type\":\"turn.started\"}\n{\"type\":\"thread.started\",\"thread_id\":\"T1\"}\n",
        );
        codex.bypass_trust = false;
        let (_, second) = codex.invocation("b").unwrap();
        assert_eq!(second, ["exec", "resume", "--json", "T1", "b"]);

        let mut gemini = Session::new(Agent::Gemini, &inst, &d, 1);
        gemini.started = true;
        let (_, args) = gemini.invocation("c").unwrap();
        assert_eq!(&args[4..], ["--resume", "latest", "-p", "c"]);

        for agent in [Agent::Copilot, Agent::Qwen] {
            let mut s = Session::new(agent, &inst, &d, 1);
            let (_, first) = s.invocation("a [p:t1]").unwrap();
            assert!(!first.contains(&"--no-custom-instructions".to_owned()));
            s.started = true;
            let (_, second) = s.invocation("b [p:t2]").unwrap();
            assert!(at(&first, "--session-id").is_some());
            assert_eq!(at(&first, "--session-id"), at(&second, "--resume"));
            assert_eq!(at(&second, "-p").as_deref(), Some("b [p:t2]"));
        }
        let mut copilot = Session::new(Agent::Copilot, &inst, &d, 1);
        copilot.native_off = true;
        copilot.started = true;
        let (_, compact) = copilot.invocation("/compact").unwrap();
        assert!(compact.contains(&"--continue".to_owned()) && at(&compact, "--resume").is_none());
        assert!(compact.contains(&"--no-custom-instructions".to_owned()));
    }

    #[test]
    fn trust_is_persisted_only_with_a_hooks_state_table() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        fs::create_dir_all(d.codex_home()).unwrap();
        fs::write(d.codex_home().join("config.toml"), "model = \"x\"\n").unwrap();
        assert!(!codex_trust_persisted(&d));
        fs::write(
            d.codex_home().join("config.toml"),
            "[hooks.state.\"/h:SessionStart:0:0\"]\ntrusted_hash = \"x\"\n",
        )
        .unwrap();
        assert!(codex_trust_persisted(&d));
    }

    #[test]
    fn a_step_over_its_limit_is_killed_and_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let mut c = Command::new("sleep");
        c.arg("30");
        let r = run_bounded(&mut c, tmp.path(), "s", Duration::from_millis(100)).unwrap();
        assert!(r.timed_out);
        assert_eq!(r.code, None);
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo out; echo err >&2; exit 3"]);
        // A hang guard (decision 0082): `sh -c` exits at once.
        let r = run_bounded(&mut ok, tmp.path(), "t", Duration::from_secs(120)).unwrap();
        assert_eq!(
            (
                r.code,
                r.timed_out,
                r.stdout.as_str(),
                r.stderr_tail.as_str()
            ),
            (Some(3), false, "out\n", "err")
        );
    }
}
