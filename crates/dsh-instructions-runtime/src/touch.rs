//! Typed touches: what a host knows a tool did to a path (R-RT-3,
//! R-DISC-10), reported with [`crate::Instance::touch`] instead of a tool
//! execution the runtime would read the path back out of.

/// What a tool did at a path. The path given with it is absolute, or
/// relative to the instance's cwd; it is normalized lexically (`.`/`..`),
/// never resolved through the filesystem.
///
/// | kind | the path names | touches |
/// |---|---|---|
/// | [`Read`](TouchKind::Read), [`Write`](TouchKind::Write) | a file | the file's directory, whether or not the file exists |
/// | [`List`](TouchKind::List), [`Search`](TouchKind::Search) | a directory | the directory itself, whether or not it exists |
/// | [`Shell`](TouchKind::Shell) | the command's working directory | every word of the command that names an existing file (its directory) or directory (itself), as R-DISC-10 says |
///
/// A touched directory reconciles, as R-RT-3 says, every directory from
/// below the cwd down to it; one outside the cwd reconciles nothing new. A
/// blank path touches nothing, except for [`Shell`](TouchKind::Shell),
/// where it means the instance's cwd. Read and write (and list and search)
/// touch alike today; the kinds are kept apart so a host says what happened
/// and the log it keeps stays readable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TouchKind {
    /// A file was read.
    Read,
    /// A file was written, edited, created, deleted or moved to.
    Write,
    /// A directory was listed.
    List,
    /// A directory was searched (a grep or glob root).
    Search,
    /// A shell command ran with the path as its working directory; its
    /// words are read as `crate::command_paths` reads them (nothing is
    /// executed), and only those the provider finds inside the trusted
    /// roots touch (decision 0015).
    Shell {
        /// The command exactly as it was run.
        command: String,
    },
}

impl TouchKind {
    /// The name a log records the kind under: `read`, `write`, `list`,
    /// `search` or `shell`.
    ///
    /// ```
    /// use dsh_instructions_runtime::TouchKind;
    /// assert_eq!(TouchKind::List.as_str(), "list");
    /// assert_eq!(TouchKind::Shell { command: "ls".into() }.as_str(), "shell");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::List => "list",
            Self::Search => "search",
            Self::Shell { .. } => "shell",
        }
    }

    /// Whether the path names a directory that is touched itself (list,
    /// search), rather than a file whose directory is.
    pub fn names_a_directory(&self) -> bool {
        matches!(self, Self::List | Self::Search)
    }
}
