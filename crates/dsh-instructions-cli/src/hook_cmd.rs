//! `hook`: the agent event handler and `hook install | uninstall | doctor`
//! (SPEC §12, R-HOOK-1, R-HOOK-5). This module only resolves the
//! environment — `$HOME`, `$CODEX_HOME` (default `~/.codex`), `$DSH_HOME`,
//! the project directory and this binary's path — and prints; the work is
//! in `dsh-instructions-hooks` (the event) and `dsh-instructions-installer`
//! (the settings).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dsh_home_paths::os_home;
use dsh_instructions_hooks::{self as hooks, Agent, Invocation, state::config::RuleFormat};
use dsh_instructions_installer::{self as installer, Locations, Target};

use crate::args::{HookAction, HookArgs, HookTargetArgs};
use crate::error::{CliError, EXIT_PROBLEMS};
use crate::setup;

/// Runs `hook …`.
pub(crate) fn run(args: &HookArgs) -> Result<ExitCode, CliError> {
    let Some(action) = &args.action else {
        return Ok(handle_event(args.agent, args.part, args.event.as_deref()));
    };
    let agent = args.agent.ok_or_else(|| {
        CliError::new("hook: --agent claude|codex|gemini|copilot|qwen|pi|opencode is required")
    })?;
    match action {
        HookAction::Install(i) => {
            let a = &i.change;
            let options = installer::InstallOptions {
                rules: i.rules.as_deref().map(parse_rules).transpose()?,
                package: if agent.in_process() {
                    Some(binding_package(i.package.as_deref())?)
                } else {
                    None
                },
            };
            let (loc, command) = resolve(agent, &a.target)?;
            if a.target.command.is_none() && !a.dry_run && !agent.in_process() {
                keep_stable_copy(&loc.dsh_home)?;
            }
            let target = Target {
                agent,
                scope: a.target.scope,
                locations: &loc,
            };
            let report = installer::install_with(&target, &command, &options, a.dry_run)
                .map_err(hook_error)?;
            print_report(&report);
            Ok(ExitCode::SUCCESS)
        }
        HookAction::Uninstall(a) => {
            let (loc, _) = resolve(agent, &a.target)?;
            let target = Target {
                agent,
                scope: a.target.scope,
                locations: &loc,
            };
            let report = installer::uninstall(&target, a.dry_run).map_err(hook_error)?;
            print_report(&report);
            Ok(ExitCode::SUCCESS)
        }
        HookAction::Doctor(t) => {
            let (loc, command) = resolve(agent, t)?;
            let target = Target {
                agent,
                scope: t.scope,
                locations: &loc,
            };
            let mut d = if agent.in_process() {
                // Compared with what install would write where the package
                // is found; a file whose package is gone is stale anyway.
                let package = binding_package(None).ok();
                installer::doctor_in_process(&target, package.as_deref()).map_err(hook_error)?
            } else {
                installer::doctor(&target, &command).map_err(hook_error)?
            };
            // R-HOOK-8: say where the hook's budget gives the model less than
            // every file here (a warning: the installation itself is fine),
            // before the report, whose last line stays its verdict; and
            // which files above the project root the hook delivers.
            match crate::inspect_cmd::hook_files_here(agent) {
                Ok(here) => {
                    if here.budget.is_empty() {
                        out!("budget: every instruction file at this directory fits whole");
                    }
                    for l in here.budget {
                        out!("warning: budget: {l}");
                    }
                    d.note_ancestor_files(here.ancestors);
                    for l in rules_lines(agent, t.scope, &here.rule_formats, &here.undelivered) {
                        out!("{l}");
                    }
                }
                Err(e) => out!("budget: not checked here ({e})"),
            }
            out_raw!("{}", d.render());
            Ok(if d.healthy() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_PROBLEMS)
            })
        }
    }
}

/// The event handler (R-HOOK-1): one event from stdin, the answer on
/// stdout, exit 0 whatever happens — an agent never sees the adapter fail.
fn handle_event(agent: Option<Agent>, part: Option<u32>, event: Option<&str>) -> ExitCode {
    use std::io::Read as _;
    let mut input = Vec::new();
    // One byte more than the bound tells an oversized event from a full one.
    let limit = hooks::event::MAX_EVENT_BYTES as u64 + 1;
    let read = std::io::stdin().take(limit).read_to_end(&mut input);
    match (agent, read, setup::process_env()) {
        // Printed and flushed by the adapter itself, so that a part counts
        // as finished only once the agent can read it (decision 0043).
        // The process ends with the answer: the event's state is left to
        // the operating system, not freed (R-HOOK-6).
        (Some(agent), Ok(_), Ok(env)) => {
            let call = Invocation {
                part,
                event,
                exit: true,
                ..Invocation::new(agent, &input, &env)
            };
            // With `exit`, the answer ends the process: this never returns.
            let _ = hooks::answer(&call, &mut std::io::stdout().lock());
        }
        // No agent, unreadable stdin or cwd: nothing to give.
        _ => out!("{{}}"),
    }
    ExitCode::SUCCESS
}

/// What `hook doctor` says about the rule files here (R-RULE-7): that the
/// hook delivers every one, or each it does not, then the command that
/// would make it (the formats it reads and the missing ones, since
/// `--rules` replaces the list).
fn rules_lines(
    agent: Agent,
    scope: hooks::Scope,
    read: &[RuleFormat],
    undelivered: &[(String, RuleFormat)],
) -> Vec<String> {
    if undelivered.is_empty() {
        return vec!["rules: the hook delivers every rule file here".to_owned()];
    }
    let mut formats: Vec<RuleFormat> = read.to_vec();
    let mut lines = Vec::with_capacity(undelivered.len() + 1);
    for (path, format) in undelivered {
        lines.push(format!(
            "warning: rules: {path} ({format}) is not delivered by the {agent} hook"
        ));
        if !formats.contains(format) {
            formats.push(*format);
        }
    }
    formats.sort();
    let names: Vec<&str> = formats.iter().map(|f| f.as_str()).collect();
    let scope = match scope {
        hooks::Scope::User => String::new(),
        other => format!(" --scope {other}"),
    };
    lines.push(format!(
        "rules: to deliver them: dsh-instructions hook install --agent {agent}{scope} --rules {}",
        names.join(",")
    ));
    lines
}

/// The formats of `--rules` (`none`: none), each known (R-CFG-12); an
/// unknown one is an error naming the flag.
fn parse_rules(text: &str) -> Result<Vec<RuleFormat>, CliError> {
    if text.trim() == "none" {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| {
            f.parse().map_err(|_| {
                CliError::new(format!(
                    "--rules: unknown rule format `{f}` (known: claude, cursor, copilot, windsurf; or none)"
                ))
            })
        })
        .collect()
}

fn hook_error(e: installer::InstallError) -> CliError {
    CliError::new(format!("hook: {e}"))
}

fn print_report(report: &installer::Report) {
    if report.dry_run {
        out_raw!("{}", report.diff());
    }
    out_raw!("{}", report.summary());
}

fn this_exe() -> Result<PathBuf, CliError> {
    std::env::current_exe()
        .map_err(|e| CliError::new(format!("hook: cannot find this binary's path: {e}")))
}

/// The binary the agents' hooks run. `npx dsh-instructions …` runs it from
/// npm's cache (`~/.npm/_npx/<hash>/…`), which npm may clear at any time: a
/// hook registered there would silently stop running. Such a binary
/// registers a stable copy in the DSH home (`$DSH_HOME/bin/`), which
/// `hook install` keeps current; any other binary registers itself.
fn registered_exe(exe: &Path, dsh_home: &Path) -> PathBuf {
    let in_npx_cache = exe.components().any(|c| c.as_os_str() == "_npx");
    match exe.file_name() {
        Some(name) if in_npx_cache => dsh_home.join("bin").join(name),
        _ => exe.to_owned(),
    }
}

/// Copies this binary to its [`registered_exe`] place when that is not
/// itself: a temporary file in the same directory, made executable, then
/// renamed over the old copy (a hook running the old one keeps it open).
fn keep_stable_copy(dsh_home: &Path) -> Result<(), CliError> {
    let exe = this_exe()?;
    let stable = registered_exe(&exe, dsh_home);
    if stable == exe {
        return Ok(());
    }
    let fail = |what: &str, e: std::io::Error| {
        CliError::new(format!("hook: cannot {what} {}: {e}", stable.display()))
    };
    let dir = stable.parent().unwrap_or(dsh_home);
    std::fs::create_dir_all(dir).map_err(|e| fail("create the directory of", e))?;
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail("stage", e))?;
    std::fs::copy(&exe, tmp.path()).map_err(|e| fail("copy this binary to", e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))
            .map_err(|e| fail("make executable", e))?;
    }
    tmp.persist(&stable).map_err(|e| fail("replace", e.error))?;
    Ok(())
}

/// The agent's directories and the command to register.
fn resolve(agent: Agent, t: &HookTargetArgs) -> Result<(Locations, String), CliError> {
    let env = setup::process_env()?;
    let home = os_home(&env)?.into_std_path_buf();
    // Codex resolves a set $CODEX_HOME through symlinks, and keys its hook
    // trust by the resulting path, so the trust keys must use it too.
    let codex_home = match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(v) => {
            let p = PathBuf::from(v);
            std::fs::canonicalize(&p).unwrap_or(p)
        }
        None => home.join(".codex"),
    };
    let dsh_home = setup::flag_home(&env, None)?.path.into_std_path_buf();
    // The project of --scope project; doctor also uses it at user scope, to
    // notice an installation in both scopes.
    let project = match &t.project {
        Some(p) => setup::absolute(&env, p, "--project")?.into_std_path_buf(),
        None => env.cwd.clone(),
    };
    let project = std::fs::canonicalize(&project).unwrap_or(project);
    let command = match &t.command {
        Some(c) => c.clone(),
        None => {
            let exe = this_exe()?;
            hooks::agents::hook_command(&registered_exe(&exe, &dsh_home), agent)
        }
    };
    // pi's agent directory and opencode's configuration directory, as they
    // resolve them (agents/pi.md, agents/opencode.md).
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let pi_agent_dir = var("PI_CODING_AGENT_DIR").unwrap_or_else(|| home.join(".pi/agent"));
    let opencode_config = var("XDG_CONFIG_HOME")
        .unwrap_or_else(|| home.join(".config"))
        .join("opencode");
    Ok((
        Locations {
            home,
            codex_home,
            project,
            dsh_home,
            pi_agent_dir,
            opencode_config,
        },
        command,
    ))
}

/// The installed npm package `dsh-agent-instructions` whose extension or
/// plugin pi's and opencode's file loads (decision 0086): `--package DIR`,
/// else the one in npm's global root (`npm root -g`), made absolute.
fn binding_package(given: Option<&Path>) -> Result<PathBuf, CliError> {
    let dir = match given {
        Some(dir) => dir.to_owned(),
        None => {
            let out = std::process::Command::new(if cfg!(windows) { "npm.cmd" } else { "npm" })
                .args(["root", "-g"])
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
                        .join("dsh-agent-instructions")
                }
                _ => {
                    return Err(CliError::new(
                        "hook install: npm is not on PATH to find the package dsh-agent-instructions; \
                         name its directory with --package",
                    ));
                }
            }
        }
    };
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}

#[cfg(test)]
mod stable_exe_tests {
    use super::*;
    use rstest::rstest;

    /// Only a binary in npx's cache registers the copy in the DSH home.
    #[rstest]
    #[case::npx(
        "/home/u/.npm/_npx/4b4e/node_modules/@dsh-instructions/linux-x64/bin/dsh-instructions",
        "/home/u/.dsh/bin/dsh-instructions"
    )]
    #[case::global_npm(
        "/usr/lib/node_modules/dsh-instructions/node_modules/@dsh-instructions/linux-x64/bin/dsh-instructions",
        "/usr/lib/node_modules/dsh-instructions/node_modules/@dsh-instructions/linux-x64/bin/dsh-instructions"
    )]
    #[case::cargo(
        "/home/u/.cargo/bin/dsh-instructions",
        "/home/u/.cargo/bin/dsh-instructions"
    )]
    #[case::npx_in_a_name(
        "/opt/my_npx_tools/dsh-instructions",
        "/opt/my_npx_tools/dsh-instructions"
    )]
    fn only_npx_cache_binaries_register_a_stable_copy(#[case] exe: &str, #[case] want: &str) {
        assert_eq!(
            registered_exe(Path::new(exe), Path::new("/home/u/.dsh")),
            PathBuf::from(want)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooks::Scope;
    use rstest::rstest;

    #[rstest]
    #[case("claude,cursor", &[RuleFormat::Claude, RuleFormat::Cursor])]
    #[case(" windsurf , copilot ", &[RuleFormat::Windsurf, RuleFormat::Copilot])]
    #[case("none", &[])]
    fn rules_parse(#[case] text: &str, #[case] want: &[RuleFormat]) {
        assert_eq!(parse_rules(text).expect("valid"), want);
    }

    #[rstest]
    #[case("claude,zed", "`zed`")]
    #[case("Cursor", "`Cursor`")]
    fn an_unknown_rule_format_is_an_error_naming_the_flag(#[case] text: &str, #[case] bad: &str) {
        let e = parse_rules(text).unwrap_err().to_string();
        assert!(e.contains("--rules") && e.contains(bad), "{e}");
    }

    /// R-RULE-7: all delivered is one line; otherwise a line per file and
    /// the exact command, keeping the formats the hook reads already.
    #[test]
    fn doctor_rules_lines_name_the_files_and_the_command() {
        assert_eq!(
            rules_lines(Agent::Codex, Scope::User, &[], &[]),
            ["rules: the hook delivers every rule file here"]
        );
        let missing = [(".cursor/rules/x.mdc".to_owned(), RuleFormat::Cursor)];
        assert_eq!(
            rules_lines(Agent::Codex, Scope::User, &[], &missing),
            [
                "warning: rules: .cursor/rules/x.mdc (cursor) is not delivered by the codex hook",
                "rules: to deliver them: dsh-instructions hook install --agent codex --rules cursor",
            ]
        );
        let lines = rules_lines(
            Agent::Gemini,
            Scope::Project,
            &[RuleFormat::Windsurf],
            &missing,
        );
        assert_eq!(
            lines[1],
            "rules: to deliver them: dsh-instructions hook install --agent gemini --scope project --rules cursor,windsurf"
        );
    }
}
