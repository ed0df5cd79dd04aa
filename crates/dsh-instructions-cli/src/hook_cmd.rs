//! `hook`: the agent event handler and `hook install | uninstall | doctor`
//! (SPEC §12, R-HOOK-1, R-HOOK-5). This module only resolves the
//! environment — `$HOME`, `$CODEX_HOME` (default `~/.codex`), `$DSH_HOME`,
//! the project directory and this binary's path — and prints; the work is
//! in `dsh-instructions-hooks`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dsh_home_paths::os_home;
use dsh_instructions_hooks::{self as hooks, Agent, Locations, Target};

use crate::args::{HookAction, HookArgs, HookTargetArgs};
use crate::error::{CliError, EXIT_PROBLEMS};
use crate::setup;

/// Runs `hook …`.
pub(crate) fn run(args: &HookArgs) -> Result<ExitCode, CliError> {
    let Some(action) = &args.action else {
        return Ok(handle_event(args.agent, args.part));
    };
    let agent = args
        .agent
        .ok_or_else(|| CliError::new("hook: --agent claude|codex|gemini is required"))?;
    match action {
        HookAction::Install(a) => {
            let (loc, command) = resolve(agent, &a.target)?;
            let target = Target {
                agent,
                scope: a.target.scope,
                locations: &loc,
            };
            let report = hooks::install(&target, &command, a.dry_run).map_err(hook_error)?;
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
            let report = hooks::uninstall(&target, a.dry_run).map_err(hook_error)?;
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
            let d = hooks::doctor(&target, &command).map_err(hook_error)?;
            // R-HOOK-8: say where the hook's budget gives the model less than
            // every file here (a warning: the installation itself is fine),
            // before the report, whose last line stays its verdict.
            match crate::inspect_cmd::hook_budget_problems(agent) {
                Ok(lines) if lines.is_empty() => {
                    out!("budget: every instruction file at this directory fits whole");
                }
                Ok(lines) => {
                    for l in lines {
                        out!("warning: budget: {l}");
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
fn handle_event(agent: Option<Agent>, part: Option<u32>) -> ExitCode {
    use std::io::Read as _;
    let mut input = Vec::new();
    // One byte more than the bound tells an oversized event from a full one.
    let limit = hooks::MAX_EVENT_BYTES as u64 + 1;
    let read = std::io::stdin().take(limit).read_to_end(&mut input);
    let answer = match (agent, read, setup::process_env()) {
        (Some(agent), Ok(_), Ok(env)) => hooks::respond_part(agent, part, &input, &env),
        // No agent, unreadable stdin or cwd: nothing to give.
        _ => "{}".to_owned(),
    };
    out!("{answer}");
    ExitCode::SUCCESS
}

fn hook_error(e: hooks::HookError) -> CliError {
    CliError::new(format!("hook: {e}"))
}

fn print_report(report: &hooks::Report) {
    if report.dry_run {
        out_raw!("{}", report.diff());
    }
    out_raw!("{}", report.summary());
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
            let exe = std::env::current_exe()
                .map_err(|e| CliError::new(format!("hook: cannot find this binary's path: {e}")))?;
            hooks::hook_command(Path::new(&exe), agent)
        }
    };
    Ok((
        Locations {
            home,
            codex_home,
            project,
            dsh_home,
        },
        command,
    ))
}
