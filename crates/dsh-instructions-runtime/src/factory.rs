//! How a mount reaches a filesystem: the [`ProviderFactory`] seam, its
//! production implementation over cap-std ([`CapStdFactory`]) and, with
//! `test-support`, the in-memory provider's.

use std::sync::Arc;

use camino::Utf8PathBuf;
use dsh_instructions_discovery::cap_std::AmbientAuthority;
use dsh_instructions_discovery::{CapStdProvider, DirMemory, DiscoveryError, FsProvider};

use crate::error::RuntimeError;

/// How a [`crate::MountBuilder`] reaches a filesystem.
///
/// [`CapStdFactory`] is the production implementation; the in-memory provider
/// implements it too, for tests and the conformance suite.
pub trait ProviderFactory: Send + Sync {
    /// A provider for the project-root walk: it answers
    /// [`FsProvider::marker`] (existence only, R-DISC-7) along the cwd's
    /// ancestors and is used for nothing else.
    ///
    /// # Errors
    /// When it cannot be built.
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, RuntimeError>;

    /// The content provider, confined to `trusted_roots`.
    ///
    /// # Errors
    /// When a root cannot be opened.
    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, RuntimeError>;

    /// The content provider, confined to `trusted_roots` plus names-only
    /// roots: in each of `dirs` (the directories above the project root)
    /// exactly the relative paths `names` may be probed and read, nothing
    /// else of them (`ancestor_instruction_files`, R-HOOK-8,
    /// docs/decisions/0044). Only called with a non-empty `names`.
    ///
    /// The default ignores the names-only roots, so a factory that does
    /// not implement it reports those files as outside the trusted roots
    /// (`explain` shows it) rather than reading them some other way.
    ///
    /// # Errors
    /// When a root cannot be opened.
    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        let _ = (dirs, names);
        self.open(trusted_roots)
    }
}

/// The [`ProviderFactory`] of the real filesystem: it opens a
/// [`CapStdProvider`] (the provider itself, in the discovery crate) on the
/// trusted roots [`crate::MountBuilder::open`] derives. Constructing it takes the caller's
/// [`AmbientAuthority`] (`dsh_instructions_discovery::cap_std::ambient_authority()`),
/// so the one place a product grants access by absolute path is visible.
#[derive(Clone)]
pub struct CapStdFactory {
    authority: AmbientAuthority,
    /// Providers run their filesystem work inline (see [`CapStdFactory::inline`]).
    inline: bool,
    /// Directory stamps shared by every provider this factory opens
    /// (see [`CapStdFactory::remembering`]).
    memory: Option<DirMemory>,
}

impl std::fmt::Debug for CapStdFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CapStdFactory")
    }
}

impl CapStdFactory {
    /// Grants [`crate::MountBuilder::open`] the right to open the trusted roots by path.
    pub fn new(authority: AmbientAuthority) -> Self {
        Self {
            authority,
            inline: false,
            memory: None,
        }
    }

    /// Providers that run their filesystem work on the polling thread,
    /// not on tokio's blocking pool ([`CapStdProvider::run_inline`]): for a
    /// one-shot process with nothing else to run, such as the agent hook
    /// (R-HOOK-6), where each hand-off to the pool is a thread wake-up.
    ///
    /// ```
    /// use dsh_instructions_discovery::cap_std::ambient_authority;
    /// use dsh_instructions_runtime::CapStdFactory;
    /// let fs = CapStdFactory::new(ambient_authority()).inline();
    /// # let _ = fs;
    /// ```
    #[must_use]
    pub fn inline(mut self) -> Self {
        self.inline = true;
        self
    }

    /// Providers that prove known directories from the stamps an earlier
    /// process left in `memory` and record what they observe into it
    /// ([`CapStdProvider::remembering`], decision 0037): for a one-shot
    /// process over a long session, such as the agent hook (R-HOOK-6).
    /// The caller decodes the memory before mounting and writes
    /// [`DirMemory::encode`] back afterwards when [`DirMemory::changed`].
    ///
    /// ```
    /// use dsh_instructions_discovery::{DirMemory, cap_std::ambient_authority};
    /// use dsh_instructions_runtime::CapStdFactory;
    /// let memory = DirMemory::decode(b"");
    /// let fs = CapStdFactory::new(ambient_authority()).inline().remembering(memory.clone());
    /// # let _ = fs;
    /// assert!(!memory.changed());
    /// ```
    #[must_use]
    pub fn remembering(mut self, memory: DirMemory) -> Self {
        self.memory = Some(memory);
        self
    }

    fn provider(&self, roots: &[Utf8PathBuf]) -> Result<CapStdProvider, DiscoveryError> {
        let provider =
            CapStdProvider::new(roots.iter().cloned(), self.authority)?.run_inline(self.inline);
        Ok(match &self.memory {
            Some(memory) => provider.remembering(memory.clone()),
            None => provider,
        })
    }
}

impl ProviderFactory for CapStdFactory {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        // Marker probes check existence by absolute path; a provider with no
        // trusted root can do that and can read nothing.
        Ok(Arc::new(self.provider(&[])?))
    }

    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(Arc::new(self.provider(trusted_roots)?))
    }

    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        let provider = self
            .provider(trusted_roots)?
            .names_only(dirs.iter().cloned(), names);
        Ok(Arc::new(provider))
    }
}

/// The in-memory provider mounts through [`crate::MountBuilder::open`] like the disk: its
/// root walk and content provider are views of the same tree, and it
/// refuses the roots the cap-std provider refuses, with the same error.
#[cfg(feature = "test-support")]
impl ProviderFactory for dsh_instructions_discovery::memory::MemoryProvider {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(Arc::new(self.clone()))
    }

    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(Arc::new(
            self.try_with_trusted_roots(trusted_roots.to_vec())?,
        ))
    }

    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        // The same refusals as `open` (a relative or looping root).
        let provider = self
            .try_with_trusted_roots(trusted_roots.to_vec())?
            .with_names_only(dirs.to_vec(), names);
        Ok(Arc::new(provider))
    }
}

/// A shared factory is a factory: a caller that wraps one (a recorder, a
/// decorator) and hands it to a [`crate::MountBuilder`] keeps its own handle.
impl<T: ProviderFactory + ?Sized> ProviderFactory for Arc<T> {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        (**self).marker_walker()
    }

    fn open(&self, trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        (**self).open(trusted_roots)
    }

    fn open_with_names(
        &self,
        trusted_roots: &[Utf8PathBuf],
        dirs: &[Utf8PathBuf],
        names: &[String],
    ) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        (**self).open_with_names(trusted_roots, dirs, names)
    }
}

/// A provider the caller built itself — a decorator that counts or records
/// calls, or one confined to roots of its own choosing — used as it is: the
/// root walk and the content go through it, and the trusted roots a mount
/// derives do not narrow it (nor do the names-only roots above the project
/// root widen it).
impl ProviderFactory for Arc<dyn FsProvider> {
    fn marker_walker(&self) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.clone())
    }

    fn open(&self, _trusted_roots: &[Utf8PathBuf]) -> Result<Arc<dyn FsProvider>, RuntimeError> {
        Ok(self.clone())
    }
}
