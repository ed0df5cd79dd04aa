//! Cline CLI's hooks: no settings file, but one executable file per event
//! in its hooks directory (`~/.cline/hooks/`, or a project's
//! `.clinerules/hooks/`), named after the event; Cline runs every file
//! whose name without its extension is the event's (harness
//! `agents/cline.md`). Ours are extension-less scripts that run the hook
//! command; a file of that name that is not ours is never overwritten
//! (decision 0089).

use std::path::Path;

use dsh_instructions_hooks::Agent;
use dsh_instructions_hooks::agents::is_our_command;

use crate::docs::Docs;
use crate::error::InstallError;
use crate::files;
use crate::hooks::EventStatus;
use crate::layout::same_command;

/// The line our scripts run the hook command on.
const EXEC: &str = "exec ";

/// The script Cline runs on `event`: the hook command, fed Cline's stdin.
pub(crate) fn script(base: &str, event: &str) -> String {
    format!(
        "#!/bin/sh\n\
         # Cline runs this file on its {event} event. Written by\n\
         # `dsh-instructions hook install --agent cline`; `hook uninstall` removes it.\n\
         {EXEC}{base}\n"
    )
}

/// The hook command a script of ours runs, if `text` is one.
fn command_of(text: &str) -> Option<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix(EXEC))
        .find(|c| is_our_command(c))
}

/// Whether a hook file holds a script of ours.
fn is_ours(text: &str) -> bool {
    command_of(text).is_some()
}

/// Sets every event's file to our script for `base`; a file there that is
/// not ours stops the run before anything is written.
pub(crate) fn install(docs: &mut Docs, dir: &Path, base: &str) -> Result<(), InstallError> {
    for spec in Agent::Cline.events() {
        let path = dir.join(spec.name);
        let i = docs.load_text(&path)?;
        let (after, before) = docs.text(i)?;
        if before.is_some_and(|t| !is_ours(t)) {
            return Err(InstallError::Occupied { path });
        }
        *after = Some(script(base, spec.name));
    }
    Ok(())
}

/// Removes every event's file of ours; another's stays.
pub(crate) fn uninstall(docs: &mut Docs, dir: &Path) -> Result<(), InstallError> {
    for spec in Agent::Cline.events() {
        let path = dir.join(spec.name);
        let i = docs.load_text(&path)?;
        let (after, before) = docs.text(i)?;
        if before.is_some_and(is_ours) {
            *after = None;
        }
    }
    Ok(())
}

/// Whether any event's file in `dir` is ours.
pub(crate) fn any_ours(dir: &Path) -> bool {
    Agent::Cline.events().iter().any(|spec| {
        files::read_optional(&dir.join(spec.name))
            .ok()
            .flatten()
            .is_some_and(|t| is_ours(&t))
    })
}

/// Each event's status, and the problems found.
pub(crate) struct Checked {
    /// Per event, in registration order.
    pub events: Vec<(&'static str, EventStatus)>,
    /// A file that is not ours.
    pub problems: Vec<String>,
}

/// Each event's file compared with the script for `command`, and the
/// problems found (a file that is not ours, one Cline cannot run).
pub(crate) fn check(dir: &Path, command: &str) -> Result<Checked, InstallError> {
    let mut events = Vec::new();
    let mut problems = Vec::new();
    for spec in Agent::Cline.events() {
        let path = dir.join(spec.name);
        let status = match files::read_optional(&path)? {
            None => EventStatus::Missing,
            Some(text) => match command_of(&text) {
                None => {
                    problems.push(format!(
                        "{} is not ours: Cline runs it, and the adapter's file cannot go there",
                        path.display()
                    ));
                    EventStatus::Missing
                }
                Some(found) if !same_command(found, command) => EventStatus::Stale {
                    detail: format!("runs `{found}`, expected `{command}`"),
                },
                Some(_) if !executable(&path) => EventStatus::Stale {
                    detail: "not executable: Cline cannot run it".to_owned(),
                },
                Some(_) => EventStatus::Present,
            },
        };
        events.push((spec.name, status));
    }
    Ok(Checked { events, problems })
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(_: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn a_script_runs_the_command_and_is_recognised() {
        let base = "'/opt/my tools/dsh-instructions' hook --agent cline";
        let text = script(base, "PreToolUse");
        assert!(text.starts_with("#!/bin/sh\n"), "{text}");
        assert!(text.contains("its PreToolUse event"));
        assert_eq!(command_of(&text), Some(base));
        assert_eq!(
            shlex::split(command_of(&text).expect("ours")).expect("words")[0],
            "/opt/my tools/dsh-instructions"
        );
    }

    #[rstest]
    #[case("#!/bin/sh\nexec python3 my-hook.py\n")]
    #[case("#!/bin/sh\n# exec /x/dsh-instructions hook --agent cline\necho '{}'\n")]
    #[case("")]
    fn another_s_script_is_not_ours(#[case] text: &str) {
        assert!(!is_ours(text), "{text}");
    }
}
