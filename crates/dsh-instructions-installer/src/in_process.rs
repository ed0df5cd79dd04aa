//! pi's extension and opencode's plugin (R-HOOK-11, decision 0086): no command hooks,
//! but one file of our own where the agent loads extensions or plugins
//! from. It imports the Node binding's integration module from the
//! installed npm package `dsh-agent-instructions` by its absolute path and
//! passes the profile's configuration; uninstall removes it (or gives back
//! what was there before, byte for byte).

use std::path::{Path, PathBuf};

use dsh_instructions_hooks::{Agent, config::hook_preset};

use crate::error::InstallError;
use crate::hooks::EventStatus;

/// The first line of every file written here: what recognises it as ours.
const MARK: &str = "// dsh-instructions: workspace instruction files for";

/// The integration module of the package in `package`.
pub(crate) fn module(agent: Agent, package: &Path) -> PathBuf {
    package
        .join("agents")
        .join(format!("{}.mjs", agent.as_str()))
}

/// What the doctor names the one "event" of such an agent.
pub(crate) fn entry_name(agent: Agent) -> &'static str {
    match agent {
        Agent::Pi => "extension",
        _ => "plugin",
    }
}

/// The file's text for the package in `package`.
///
/// # Errors
/// [`InstallError::NoPackage`] when the package has no module for `agent`.
pub(crate) fn text(agent: Agent, package: &Path) -> Result<String, InstallError> {
    let module = module(agent, package);
    if !module.is_file() {
        return Err(InstallError::NoPackage { path: module });
    }
    let (factory, what, undo) = match agent {
        Agent::Pi => ("piExtension", "pi", "hook uninstall --agent pi"),
        _ => (
            "opencodePlugin",
            "opencode",
            "hook uninstall --agent opencode",
        ),
    };
    let settings = serde_json::json!({ "agent": agent.as_str(), "config": hook_preset(agent) });
    Ok(format!(
        "{MARK} {what} (written by `dsh-instructions hook install --agent {agent}`;\n\
         // `dsh-instructions {undo}` removes it). It loads the extension from the\n\
         // npm package dsh-agent-instructions, with the {what} profile's configuration.\n\
         import {{ {factory} }} from {};\n\n\
         export default {factory}({settings});\n",
        serde_json::Value::String(file_url(&module)),
    ))
}

/// Whether an installed file is ours, and current: missing (no file, or
/// one of someone else's), stale (ours, for another package or
/// configuration, or its package gone) or present.
pub(crate) fn status(agent: Agent, found: Option<&str>, wanted: Option<&str>) -> EventStatus {
    let Some(found) = found.filter(|t| t.starts_with(MARK)) else {
        return EventStatus::Missing;
    };
    match imported(found) {
        Some(m) if !Path::new(&m).is_file() => EventStatus::Stale {
            detail: format!("its package is gone ({m})"),
        },
        _ if wanted.is_some_and(|w| w != found) => EventStatus::Stale {
            detail: format!(
                "another package or configuration than `hook install --agent {agent}` writes now"
            ),
        },
        _ => EventStatus::Present,
    }
}

/// Whether a file's text is one this installer wrote.
pub(crate) fn is_ours(text: &str) -> bool {
    text.starts_with(MARK)
}

/// The module path an installed file imports.
fn imported(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("import "))?;
    let url: String =
        serde_json::from_str(line.split(" from ").nth(1)?.trim_end_matches(';')).ok()?;
    let path = url.strip_prefix("file://")?;
    Some(percent_decode(path))
}

/// A `file://` URL for an absolute path (what an ES module import takes
/// on every platform): bytes outside the unreserved set are escaped.
fn file_url(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = if text.starts_with('/') {
        text
    } else {
        format!("/{text}")
    };
    let mut out = String::from("file://");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("/usr/lib/node_modules/dsh-agent-instructions/agents/pi.mjs")]
    #[case("/home/a b/it's/100%/ü.mjs")]
    fn file_urls_decode_to_their_path(#[case] path: &str) {
        let url = file_url(Path::new(path));
        assert!(!url[7..].contains(' ') && !url.contains('\''), "{url}");
        assert_eq!(
            percent_decode(url.strip_prefix("file://").expect("url")),
            path
        );
    }

    /// The written file imports the package's module and passes the
    /// profile's configuration; doctor reads it back as present, and as
    /// stale once its package is gone.
    #[rstest]
    #[case(Agent::Pi, "piExtension")]
    #[case(Agent::Opencode, "opencodePlugin")]
    fn the_file_loads_the_package_with_the_profile(#[case] agent: Agent, #[case] factory: &str) {
        let tmp = tempfile::tempdir().expect("tmp");
        let pkg = tmp.path().join("dsh agent");
        assert!(matches!(
            text(agent, &pkg),
            Err(InstallError::NoPackage { .. })
        ));
        std::fs::create_dir_all(pkg.join("agents")).expect("mkdir");
        std::fs::write(module(agent, &pkg), "export {}").expect("write");
        let t = text(agent, &pkg).expect("text");
        assert!(t.starts_with(MARK));
        assert!(t.contains(&format!("import {{ {factory} }} from \"file://")));
        let settings = t
            .lines()
            .find_map(|l| l.strip_prefix(&format!("export default {factory}(")))
            .and_then(|l| l.strip_suffix(");"))
            .expect("the call");
        let v: serde_json::Value = serde_json::from_str(settings).expect("json");
        assert_eq!(v["agent"], agent.as_str());
        assert_eq!(
            v["config"],
            serde_json::to_value(hook_preset(agent)).expect("json")
        );
        assert_eq!(imported(&t).map(PathBuf::from), Some(module(agent, &pkg)));
        assert_eq!(status(agent, Some(&t), Some(&t)), EventStatus::Present);
        assert_eq!(status(agent, None, Some(&t)), EventStatus::Missing);
        assert_eq!(
            status(agent, Some("// mine\n"), Some(&t)),
            EventStatus::Missing
        );
        let other = t.replace("\"preset\"", "\"preset\" ");
        assert!(matches!(
            status(agent, Some(&other), Some(&t)),
            EventStatus::Stale { .. }
        ));
        std::fs::remove_file(module(agent, &pkg)).expect("rm");
        assert!(matches!(
            status(agent, Some(&t), None),
            EventStatus::Stale { .. }
        ));
    }
}
