//! The files of one installer run, each parsed once: JSON and TOML
//! settings edited in place, and whole-text files of our own (Cline's hook
//! scripts, `crate::cline`; pi's extension and opencode's plugin,
//! `crate::in_process`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use toml_edit::DocumentMut;

use crate::error::InstallError;
use crate::files::{self, JsonDoc};

pub(crate) enum Doc {
    Json(JsonDoc),
    Toml(DocumentMut),
    /// A file of our own whose whole text the run sets (Cline's hook
    /// scripts, pi's extension, opencode's plugin); `None` removes it.
    Text(Option<String>),
}

pub(crate) struct Loaded {
    /// The path as the agent names it (trust keys, messages).
    pub(crate) path: PathBuf,
    /// Where the bytes are: `path`, or a symlink's target.
    pub(crate) real: PathBuf,
    pub(crate) before: Option<String>,
    pub(crate) doc: Doc,
}

/// The files of one run, each parsed once even when two roles share it.
#[derive(Default)]
pub(crate) struct Docs {
    pub(crate) items: Vec<Loaded>,
}

impl Docs {
    pub(crate) fn find(&self, path: &Path) -> Option<usize> {
        self.items.iter().position(|l| l.path == path)
    }

    pub(crate) fn load(&mut self, path: &Path, toml: bool) -> Result<usize, InstallError> {
        if let Some(i) = self.find(path) {
            return Ok(i);
        }
        let real = files::resolve(path)?;
        let before = files::read_optional(path)?;
        let doc = if toml {
            Doc::Toml(files::parse_toml(path, before.as_deref())?)
        } else {
            Doc::Json(JsonDoc::parse(path, before.as_deref())?)
        };
        self.items.push(Loaded {
            path: path.to_owned(),
            real,
            before,
            doc,
        });
        Ok(self.items.len() - 1)
    }

    pub(crate) fn load_json(&mut self, path: &Path) -> Result<usize, InstallError> {
        self.load(path, false)
    }

    pub(crate) fn load_toml(&mut self, path: &Path) -> Result<usize, InstallError> {
        self.load(path, true)
    }

    /// A whole-text file of our own (Cline's hook scripts, pi's extension,
    /// opencode's plugin), its text as found.
    pub(crate) fn load_text(&mut self, path: &Path) -> Result<usize, InstallError> {
        if let Some(i) = self.find(path) {
            return Ok(i);
        }
        let real = files::resolve(path)?;
        let before = files::read_optional(path)?;
        self.items.push(Loaded {
            path: path.to_owned(),
            real,
            doc: Doc::Text(before.clone()),
            before,
        });
        Ok(self.items.len() - 1)
    }

    /// The text a whole-text file gets, and what it had.
    pub(crate) fn text(
        &mut self,
        i: usize,
    ) -> Result<(&mut Option<String>, Option<&str>), InstallError> {
        let l = &mut self.items[i];
        match &mut l.doc {
            Doc::Text(t) => Ok((t, l.before.as_deref())),
            _ => Err(InstallError::wrong_type(&l.path, "(top level)", "text")),
        }
    }

    pub(crate) fn json(&mut self, i: usize) -> Result<&mut Value, InstallError> {
        let l = &mut self.items[i];
        match &mut l.doc {
            Doc::Json(doc) => Ok(&mut doc.value),
            // `agent::files` never gives one path two formats; should that
            // break, the run fails instead of editing the wrong document.
            Doc::Toml(_) | Doc::Text(_) => {
                Err(InstallError::wrong_type(&l.path, "(top level)", "JSON"))
            }
        }
    }

    pub(crate) fn toml(&mut self, i: usize) -> Result<&mut DocumentMut, InstallError> {
        let l = &mut self.items[i];
        match &mut l.doc {
            Doc::Toml(d) => Ok(d),
            Doc::Json(_) | Doc::Text(_) => {
                Err(InstallError::wrong_type(&l.path, "(top level)", "TOML"))
            }
        }
    }
}

impl Loaded {
    /// The text after the run: only the edited parts differ from `before`.
    pub(crate) fn after(&self) -> Option<String> {
        match &self.doc {
            Doc::Json(doc) => {
                if doc.changed() {
                    Some(doc.render())
                } else {
                    self.before.clone()
                }
            }
            Doc::Toml(d) => {
                let text = d.to_string();
                if self.before.is_none() && text.trim().is_empty() {
                    None
                } else {
                    Some(text)
                }
            }
            Doc::Text(t) => t.clone(),
        }
    }

    pub(crate) fn is_empty_after(&self) -> bool {
        match &self.doc {
            Doc::Json(doc) => doc.value.as_object().is_some_and(|o| o.is_empty()),
            Doc::Toml(d) => d.to_string().trim().is_empty(),
            Doc::Text(t) => t.is_none(),
        }
    }
}
