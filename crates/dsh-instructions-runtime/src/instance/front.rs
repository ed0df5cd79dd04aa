//! The lock-free front door's staging: the touch a tool execution or a
//! typed report makes (R-RT-3, R-CFG-8, R-CFG-11), and the touches waiting
//! for a step to end or a parent call to settle (R-RT-4, decision 0011).

use std::collections::HashMap;

use camino::{Utf8Path, Utf8PathBuf};
use dsh_instructions_state::Config;

use crate::host::ToolExecution;
use crate::shell::command_paths;
use crate::touch::{PathArg, Resolved, TouchKind, resolve};

/// One touch as the front door stages it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Touch {
    /// A file's path (a read, a write, a touch tool's path; R-RT-3), which
    /// touches its directory, or a directory's (a listing, a search root),
    /// which touches the directory itself; existing or not.
    Path(Resolved),
    /// A shell command's candidate paths (R-DISC-10): only those the
    /// provider finds, by metadata, to be a file (its directory) or a
    /// directory (itself) inside the trusted roots touch anything.
    Shell(Vec<Utf8PathBuf>),
}

/// Parent tokens whose bubbled touches are kept at once. A composite call
/// has one parent however many children it runs, so only results that never
/// arrive (a host that drops them) come near this; it bounds what such a
/// host can make an instance hold within one turn (decision 0011).
pub(crate) const MAX_WAITING_PARENTS: usize = 1024;

#[derive(Debug, Default)]
pub(super) struct Front {
    pub(super) step_open: bool,
    pub(super) staged: Vec<Touch>,
    /// Touches bubbled to a parent token, waiting for it to settle (R-RT-4).
    /// Dropped when the parent settles, when the turn ends, and oldest first
    /// beyond [`MAX_WAITING_PARENTS`] (decision 0011).
    pub(super) children: HashMap<String, Waiting>,
    /// Order stamp of the next parent that starts waiting.
    pub(super) next_parent: u64,
}

/// Touches waiting for one parent token.
#[derive(Debug, Default)]
pub(super) struct Waiting {
    /// When the parent first received a touch (smaller = older).
    since: u64,
    pub(super) touches: Vec<Touch>,
}

impl Front {
    /// Adds `touches` to what waits for `parent`, evicting the oldest waiting
    /// parent when the bound is exceeded.
    pub(super) fn bubble(&mut self, parent: &str, touches: impl IntoIterator<Item = Touch>) {
        let next = &mut self.next_parent;
        let entry = self.children.entry(parent.to_owned()).or_insert_with(|| {
            *next += 1;
            Waiting {
                since: *next,
                touches: Vec::new(),
            }
        });
        entry.touches.extend(touches);
        if self.children.len() > MAX_WAITING_PARENTS
            && let Some(oldest) = self
                .children
                .iter()
                .min_by_key(|(_, w)| w.since)
                .map(|(token, _)| token.clone())
            && let Some(dropped) = self.children.remove(&oldest)
        {
            tracing::warn!(
                parent = %oldest,
                touches = dropped.touches.len(),
                "dropping touches bubbled to a parent tool call that never reported"
            );
        }
    }

    /// Forgets every waiting parent: no tool call of an ended turn reports.
    pub(super) fn end_turn(&mut self) {
        if !self.children.is_empty() {
            tracing::debug!(
                parents = self.children.len(),
                "turn ended with parent tool calls that never reported; their touches are dropped"
            );
            self.children.clear();
        }
    }
}

/// The touch of a successful execution: a shell tool's candidate paths
/// (R-CFG-11, R-DISC-10; a tool in both maps is a shell tool), else a touch
/// tool's path (R-RT-3, R-CFG-8): the first listed argument holding a
/// non-blank string; an argument listed with a trailing `/` holds a
/// directory, touched itself.
pub(super) fn touch_of(config: &Config, cwd: &Utf8Path, exec: &ToolExecution) -> Option<Touch> {
    if exec.is_error || exec.cancelled {
        return None;
    }
    if let Some(args) = config.shell_tools().get(&exec.name) {
        // The optional `workdir` argument is the base for relative words.
        let base = match exec.arguments.get("workdir").and_then(|w| w.as_str()) {
            Some(dir) if !dir.trim().is_empty() => cwd.join(dir),
            _ => cwd.to_owned(),
        };
        let commands = args
            .iter()
            .filter_map(|arg| exec.arguments.get(arg).and_then(|c| c.as_str()));
        return shell_touch(&base, commands);
    }
    let args = config.touch_tools().get(&exec.name)?;
    let (raw, kind) = args.iter().find_map(|name| {
        let arg = PathArg::configured(name);
        Some((arg.value(&exec.arguments)?, arg.kind))
    })?;
    typed_touch(cwd, Utf8Path::new(raw), &kind)
}

/// A typed touch as the front door stages it; `None` for a blank path of a
/// file or directory kind (it names nothing).
pub(super) fn typed_touch(cwd: &Utf8Path, path: &Utf8Path, kind: &TouchKind) -> Option<Touch> {
    if let TouchKind::Shell { command } = kind {
        let raw = path.as_str().trim();
        let base = if raw.is_empty() {
            cwd.to_owned()
        } else {
            cwd.join(raw)
        };
        return shell_touch(&base, [command.as_str()]);
    }
    resolve(cwd, path, kind).map(Touch::Path)
}

/// Shell commands' candidate paths, absolute and normalized: relative
/// words resolve against `base` (the call's working directory). Pure text
/// work: whether a candidate exists is asked later, on the lane.
fn shell_touch<'a>(base: &Utf8Path, commands: impl IntoIterator<Item = &'a str>) -> Option<Touch> {
    let mut paths = Vec::new();
    for command in commands {
        for word in command_paths(command) {
            // `~/…` needs the OS home, which an instance does not know;
            // touching less is the conservative side (decision 0015).
            if word.as_str().starts_with("~/") {
                continue;
            }
            let path = dsh_home_paths::normalize_lexically(&base.join(&word));
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    (!paths.is_empty()).then_some(Touch::Shell(paths))
}
