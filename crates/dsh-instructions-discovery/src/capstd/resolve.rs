//! How a path is followed (see the parent module's "How a path is
//! followed"): to the deepest trusted root containing it, through the links
//! cap-std refuses by re-anchoring their text, to its target's metadata.

use camino::{Utf8Path, Utf8PathBuf};
use cap_std::fs::Metadata;
use tokio_util::sync::CancellationToken;

use super::classify::{Class, classify, classify_metadata};
use super::{Inner, Root};
use crate::blocking::check;
use crate::dircache::plain;
use crate::paths::{link_target, normalize};
use crate::provider::MAX_LINK_HOPS;
use crate::provider::{Cancelled, PathKind, Probe, Unavailable};

/// Where a path leads.
pub(super) enum Resolution<'a> {
    Found {
        root: &'a Root,
        rel: Utf8PathBuf,
        metadata: Metadata,
    },
    Absent,
    Unavailable(Unavailable),
}

/// Result of re-anchoring an escaping path.
enum Hop<'a> {
    Next(Utf8PathBuf),
    Done(Resolution<'a>),
}

impl From<Class> for Resolution<'_> {
    fn from(class: Class) -> Self {
        match class {
            Class::Absent => Self::Absent,
            Class::Escape => Self::Unavailable(Unavailable::OutsideTrustedRoots),
            Class::Unavailable(reason) => Self::Unavailable(reason),
        }
    }
}

impl Inner {
    /// The deepest root containing `path`, with the path relative to it.
    pub(super) fn locate(&self, path: &Utf8Path) -> Option<(&Root, Utf8PathBuf)> {
        self.roots.iter().find_map(|root| {
            let rel = path.strip_prefix(&root.path).ok()?;
            let rel = if rel.as_str().is_empty() {
                Utf8PathBuf::from(".")
            } else {
                rel.to_owned()
            };
            Some((root, rel))
        })
    }

    /// Notes a regular file a probe found through no symlink, for the read
    /// that follows (the `probed` module); `path` is its normalized
    /// absolute path in pieces, joined as written.
    pub(super) fn note_probed(&self, path: &[&str]) {
        if let Ok(mut probed) = self.probed.try_lock() {
            probed.note(path);
        }
    }

    /// Follows `path` (final symlink included) to its target's metadata.
    pub(super) fn resolve(
        &self,
        path: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Resolution<'_>, Cancelled> {
        let mut current = normalize(path);
        let mut hops = 0u32;
        loop {
            check(cancel)?;
            let Some((root, rel)) = self.locate(&current) else {
                return Ok(Resolution::Unavailable(Unavailable::OutsideTrustedRoots));
            };
            let Some(dir) = root.handle() else {
                // A trusted root that does not exist (yet): nothing under it.
                return Ok(Resolution::Absent);
            };
            // A name right in the root that is no symlink: one `lstat`
            // says everything the following lookup below would (it costs
            // an `O_PATH` open, an `fstat` and a close).
            if plain(rel.as_str()) {
                match dir.symlink_metadata(rel.as_std_path()) {
                    Ok(metadata) if !metadata.file_type().is_symlink() => {
                        if metadata.is_file() {
                            self.note_probed(&[current.as_str()]);
                        }
                        return Ok(Resolution::Found {
                            root,
                            rel,
                            metadata,
                        });
                    }
                    Err(error) if matches!(classify(&error), Class::Absent) => {
                        return Ok(Resolution::Absent);
                    }
                    _ => {}
                }
            }
            let error = match dir.metadata(rel.as_std_path()) {
                Ok(metadata) => {
                    return Ok(Resolution::Found {
                        root,
                        rel,
                        metadata,
                    });
                }
                Err(error) => error,
            };
            match classify(&error) {
                Class::Escape => match self.reanchor(root, &rel, cancel)? {
                    Hop::Next(next) => {
                        hops += 1;
                        if hops > MAX_LINK_HOPS {
                            return Ok(Resolution::Unavailable(Unavailable::Loop));
                        }
                        current = next;
                    }
                    Hop::Done(resolution) => return Ok(resolution),
                },
                class => return Ok(class.into()),
            }
        }
    }

    /// Finds the first symlink along `rel` (cap-std refused the path, so one
    /// of them leaves the root) and rewrites the path through its text.
    fn reanchor<'a>(
        &'a self,
        root: &'a Root,
        rel: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Hop<'a>, Cancelled> {
        let Some(root_dir) = root.handle() else {
            return Ok(Hop::Done(Resolution::Absent));
        };
        let names: Vec<&str> = rel.iter().collect();
        let mut prefix = Utf8PathBuf::new();
        for (index, name) in names.iter().enumerate() {
            check(cancel)?;
            prefix.push(name);
            let metadata = match root_dir.symlink_metadata(prefix.as_std_path()) {
                Ok(metadata) => metadata,
                Err(error) => return Ok(Hop::Done(classify(&error).into())),
            };
            if !metadata.file_type().is_symlink() {
                continue;
            }
            check(cancel)?;
            let text = match root_dir.read_link_contents(prefix.as_std_path()) {
                Ok(text) => text,
                Err(error) => return Ok(Hop::Done(classify(&error).into())),
            };
            let Ok(text) = Utf8PathBuf::from_path_buf(text) else {
                return Ok(Hop::Done(Resolution::Unavailable(Unavailable::Io(
                    "symlink target is not valid UTF-8".to_owned(),
                ))));
            };
            let mut next = link_target(&root.path.join(&prefix), &text);
            for rest in &names[index + 1..] {
                next.push(rest);
            }
            return Ok(Hop::Next(normalize(&next)));
        }
        // cap-std saw an escape no link explains: stay conservative.
        Ok(Hop::Done(Resolution::Unavailable(
            Unavailable::OutsideTrustedRoots,
        )))
    }

    pub(super) fn probe(
        &self,
        path: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<Probe, Cancelled> {
        if let Some((root, rel)) = self.admit_named(path) {
            return self.probe_named(root, &rel, cancel);
        }
        Ok(match self.resolve(path, cancel)? {
            Resolution::Found { metadata, .. } => classify_metadata(&metadata),
            Resolution::Absent => Probe::Absent,
            Resolution::Unavailable(reason) => Probe::Unavailable(reason),
        })
    }

    /// Classifies `path` by the metadata of its resolved target (no open).
    pub(super) fn path_kind(
        &self,
        path: &Utf8Path,
        cancel: &CancellationToken,
    ) -> Result<PathKind, Cancelled> {
        Ok(match self.resolve(path, cancel)? {
            Resolution::Found { metadata, .. } if metadata.is_file() => PathKind::File,
            Resolution::Found { metadata, .. } if metadata.is_dir() => PathKind::Directory,
            Resolution::Found { .. } => PathKind::Other,
            Resolution::Absent => PathKind::Absent,
            Resolution::Unavailable(reason) => PathKind::Unavailable(reason),
        })
    }
}
