//! Deterministic benchmark trees (issue 7, item 1).
//!
//! Every byte is a function of the shape and the file's path, so two runs (and
//! two machines) measure the same tree. Trees are cached under
//! `$DSH_BENCH_TREES`, else `$CARGO_TARGET_DIR/bench-trees`, else the
//! workspace's `target/bench-trees`, in a directory named by a hash of the
//! parameters; a `.complete` stamp marks a finished build, so an interrupted
//! build (or an interrupted edit run) is rebuilt instead of trusted.

use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use camino::{Utf8Path, Utf8PathBuf};

/// Bump when the generator changes, so cached trees are rebuilt.
const GENERATOR_VERSION: u32 = 3;
/// The per-file cap the trees are designed around (the default, R-CFG-3).
pub(crate) const MAX_SOURCE_BYTES: u64 = 1 << 20;
const STAMP: &str = ".complete";

/// Which tree to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A chain `depth` directories deep below a `.git` root: `AGENTS.md` at
    /// every 4th level, `CLAUDE.md` elsewhere, `CLAUDE.md -> AGENTS.md`
    /// mirrors every 8th level, relative `AGENTS.local.md` links, one
    /// dangling `CLAUDE.local.md`.
    Deep {
        /// Directories below the root.
        depth: usize,
    },
    /// [`Shape::Deep`] plus `noise` non-candidate files per directory,
    /// near-miss names first.
    Noise {
        /// Directories below the root.
        depth: usize,
        /// Non-candidate files per directory.
        noise: usize,
    },
    /// `packages/gNNN/pNNNNN/src/` for `packages` packages, each with an
    /// `AGENTS.md`, every 10th with a `CLAUDE.md`, a few near 1 MiB and one
    /// at 1 MiB + 1 byte.
    Wide {
        /// Number of packages.
        packages: usize,
    },
    /// A chain `depth` directories deep whose every `AGENTS.md` imports
    /// [`IMPORTS_PER_FILE`] small files from its own `docs/` (SPEC §13).
    Imports {
        /// Directories below the root.
        depth: usize,
    },
}

/// `@path` imports per candidate in a [`Shape::Imports`] tree.
pub(crate) const IMPORTS_PER_FILE: usize = 10;
/// Bytes of each imported file in a [`Shape::Imports`] tree.
pub(crate) const IMPORTED_SIZE: usize = 256;

/// Root-of-directory-relative path of import `i` (`docs/rule-i.md`).
pub(crate) fn import_rel(i: usize) -> String {
    format!("docs/rule-{i}.md")
}

impl Shape {
    /// Short stable name used in case labels (`deep-256`, `wide-1000`, ...).
    pub(crate) fn label(&self) -> String {
        match self {
            Self::Deep { depth } => format!("deep-{depth}"),
            Self::Noise { depth, .. } => format!("noise-{depth}"),
            Self::Wide { packages } => format!("wide-{packages}"),
            Self::Imports { depth } => format!("imports-{depth}"),
        }
    }

    fn key(&self) -> String {
        match self {
            Self::Deep { depth } => format!("deep-{depth}"),
            Self::Noise { depth, noise } => format!("noise-{depth}x{noise}"),
            Self::Wide { packages } => format!("wide-{packages}"),
            Self::Imports { depth } => format!("imports-{depth}"),
        }
    }
}

/// Names that look like candidates but are not (case, suffix, prefix).
pub(crate) const NEAR_MISSES: &[&str] = &[
    "agents.md",
    "AGENTS.MD",
    "AGENTS.md.bak",
    "claude.md",
    "CLAUDE.md~",
    "AGENTS.local.md.orig",
    ".AGENTS.md",
    "AGENTS",
    "Agents.md",
    "CLAUDE.MD",
];

/// A built tree and what the benches need to drive it.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    /// The shape it was built from.
    pub shape: Shape,
    /// Directory holding `repo/` and `home/`.
    pub base: Utf8PathBuf,
    /// The project root (holds `.git`).
    pub root: Utf8PathBuf,
    /// The DSH home (holds the user-global `AGENTS.md`).
    pub home: Utf8PathBuf,
    /// Where a baseline compose runs: the deepest directory, or inside one
    /// package.
    pub cwd: Utf8PathBuf,
    /// Total bytes of regular instruction-candidate files in the tree.
    pub candidate_bytes: u64,
    /// Largest regular file on the root-to-cwd chain (for the memory bound).
    pub largest_on_chain: u64,
}

/// 64-bit FNV-1a: a stable hash for sizes and cache keys (std's hasher is
/// randomly seeded).
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A size in `1 KiB ..= 8 KiB`, fixed by `key`.
pub(crate) fn size_for(key: &str) -> usize {
    1024 + (fnv(key.as_bytes()) % (7 * 1024 + 1)) as usize
}

/// Instruction-like text of exactly `size` bytes for `key`; `rev` > 0 gives
/// an edited version (different content and length).
pub(crate) fn content(key: &str, size: usize, rev: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 64);
    let mut i = 0u64;
    while out.len() < size {
        out.extend_from_slice(
            format!("- rule {i} for {key}: keep changes small and tests honest.\n").as_bytes(),
        );
        i += 1;
    }
    out.truncate(size);
    if rev > 0 {
        out.extend_from_slice(format!("\n<!-- edit {rev} -->\n").as_bytes());
    }
    out
}

/// The default cache directory for trees.
pub(crate) fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DSH_BENCH_TREES") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir).join("bench-trees");
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-trees")
}

/// Absolute path of a deep-chain directory at `level` (0 = root).
pub(crate) fn deep_dir(root: &Utf8Path, level: usize) -> Utf8PathBuf {
    let mut dir = root.to_owned();
    for l in 1..=level {
        dir.push(format!("l{l:03}"));
    }
    dir
}

/// Root-relative directory of package `p`.
pub(crate) fn package_rel(p: usize) -> String {
    format!("packages/g{:03}/p{p:05}", p / 100)
}

/// Size of package `p`'s `AGENTS.md` in a wide tree of `n` packages.
pub(crate) fn package_size(p: usize, n: usize) -> usize {
    if p == n / 2 {
        // One file just over the cap: unavailable (R-DISC-6).
        (MAX_SOURCE_BYTES + 1) as usize
    } else if [7, 77, 777, 7777].contains(&p) {
        // Near the cap: the largest files a compose may have to read.
        (MAX_SOURCE_BYTES as usize) - 64 - p
    } else {
        size_for(&package_rel(p))
    }
}

/// The package index a wide tree's baseline cwd sits in.
pub(crate) const WIDE_CWD_PACKAGE: usize = 42;

fn write(path: &Utf8Path, bytes: &[u8]) -> io::Result<()> {
    fs::write(path, bytes)
}

impl Tree {
    /// Builds (or reuses) the tree for `shape` under [`cache_dir`].
    ///
    /// # Errors
    ///
    /// Any I/O error while building.
    pub(crate) fn get(shape: Shape) -> io::Result<Self> {
        Self::get_in(&cache_dir(), shape)
    }

    /// Builds (or reuses) the tree for `shape` under `dir`.
    ///
    /// # Errors
    ///
    /// Any I/O error while building; a non-UTF-8 directory.
    pub(crate) fn get_in(dir: &Path, shape: Shape) -> io::Result<Self> {
        let name = format!(
            "{}-{:016x}",
            shape.key(),
            fnv(format!("{}:{GENERATOR_VERSION}", shape.key()).as_bytes())
        );
        fs::create_dir_all(dir)?;
        let dir = fs::canonicalize(dir)?;
        let base = Utf8PathBuf::from_path_buf(dir.join(name))
            .map_err(|_| io::Error::other("bench tree path is not UTF-8"))?;
        let mut tree = Self {
            shape,
            root: base.join("repo"),
            home: base.join("home"),
            cwd: base.join("repo"),
            base,
            candidate_bytes: 0,
            largest_on_chain: 0,
        };
        let complete = tree.base.join(STAMP).exists();
        if !complete && tree.base.exists() {
            fs::remove_dir_all(&tree.base)?;
        }
        tree.generate(!complete)?;
        if !complete {
            write(&tree.base.join(STAMP), b"ok")?;
        }
        Ok(tree)
    }

    /// Walks the generator; writes files only when `build` is set (otherwise
    /// it just recomputes sizes and the cwd).
    fn generate(&mut self, build: bool) -> io::Result<()> {
        if build {
            fs::create_dir_all(self.root.join(".git"))?;
            fs::create_dir_all(&self.home)?;
            write(
                &self.home.join("AGENTS.md"),
                &content("user-global", 2048, 0),
            )?;
        }
        let mut chain_max = 2048u64;
        match self.shape {
            Shape::Deep { depth } => {
                self.deep(depth, 0, build, &mut chain_max)?;
                self.cwd = deep_dir(&self.root, depth);
            }
            Shape::Noise { depth, noise } => {
                self.deep(depth, noise, build, &mut chain_max)?;
                self.cwd = deep_dir(&self.root, depth);
            }
            Shape::Imports { depth } => {
                self.imports(depth, build, &mut chain_max)?;
                self.cwd = deep_dir(&self.root, depth);
            }
            Shape::Wide { packages } => {
                self.wide(packages, build, &mut chain_max)?;
                self.cwd = self
                    .root
                    .join(package_rel(
                        WIDE_CWD_PACKAGE.min(packages.saturating_sub(1)),
                    ))
                    .join("src");
            }
        }
        self.largest_on_chain = chain_max;
        Ok(())
    }

    fn deep(
        &mut self,
        depth: usize,
        noise: usize,
        build: bool,
        chain_max: &mut u64,
    ) -> io::Result<()> {
        let dangling = depth / 2 + 1;
        for level in 0..=depth {
            let dir = deep_dir(&self.root, level);
            let key = format!("deep/{level}");
            let size = size_for(&key);
            *chain_max = (*chain_max).max(size as u64);
            self.candidate_bytes += size as u64;
            let name = if level % 4 == 0 {
                "AGENTS.md"
            } else {
                "CLAUDE.md"
            };
            if !build {
                continue;
            }
            fs::create_dir_all(&dir)?;
            write(&dir.join(name), &content(&key, size, 0))?;
            if level % 8 == 0 {
                // A mirror: shadowed under first-wins, a duplicate under
                // all-distinct (R-CFG-7).
                symlink("AGENTS.md", dir.join("CLAUDE.md"))?;
            }
            if level % 8 == 2 {
                // A relative link into a non-candidate subdirectory.
                fs::create_dir_all(dir.join(".overlay"))?;
                write(
                    &dir.join(".overlay/local.md"),
                    &content(&format!("{key}/local"), 1024, 0),
                )?;
                symlink(".overlay/local.md", dir.join("AGENTS.local.md"))?;
            }
            if level == dangling {
                symlink("gone.md", dir.join("CLAUDE.local.md"))?;
            }
            for i in 0..noise {
                let file = NEAR_MISSES
                    .get(i)
                    .map_or_else(|| format!("file{i:04}.txt"), |n| (*n).to_owned());
                write(&dir.join(file), format!("noise {level} {i}\n").as_bytes())?;
            }
        }
        // The overlay targets count as candidate bytes too (they load).
        self.candidate_bytes += 1024 * (0..=depth).filter(|l| l % 8 == 2).count() as u64;
        Ok(())
    }

    fn imports(&mut self, depth: usize, build: bool, chain_max: &mut u64) -> io::Result<()> {
        for level in 0..=depth {
            let dir = deep_dir(&self.root, level);
            let key = format!("imports/{level}");
            let mut text = content(&key, size_for(&key), 0);
            let tokens: Vec<String> = (0..IMPORTS_PER_FILE)
                .map(|i| format!("@{}", import_rel(i)))
                .collect();
            text.extend_from_slice(format!("\nSee {}.\n", tokens.join(" ")).as_bytes());
            *chain_max = (*chain_max).max(text.len() as u64);
            self.candidate_bytes += (text.len() + IMPORTS_PER_FILE * IMPORTED_SIZE) as u64;
            if !build {
                continue;
            }
            fs::create_dir_all(dir.join("docs"))?;
            write(&dir.join("AGENTS.md"), &text)?;
            for i in 0..IMPORTS_PER_FILE {
                let rel = import_rel(i);
                write(
                    &dir.join(&rel),
                    &content(&format!("{key}/{rel}"), IMPORTED_SIZE, 0),
                )?;
            }
        }
        Ok(())
    }

    fn wide(&mut self, packages: usize, build: bool, chain_max: &mut u64) -> io::Result<()> {
        let root_size = 4096;
        self.candidate_bytes += root_size as u64;
        // The root's file is on every package's chain.
        *chain_max = (*chain_max).max(root_size as u64);
        if build {
            write(
                &self.root.join("AGENTS.md"),
                &content("wide/root", root_size, 0),
            )?;
        }
        for p in 0..packages {
            let rel = package_rel(p);
            let size = package_size(p, packages);
            self.candidate_bytes += size as u64;
            if p == WIDE_CWD_PACKAGE.min(packages.saturating_sub(1)) {
                *chain_max = (*chain_max).max(size as u64);
            }
            if !build {
                continue;
            }
            let dir = self.root.join(&rel);
            fs::create_dir_all(dir.join("src"))?;
            write(&dir.join("AGENTS.md"), &content(&rel, size, 0))?;
            if p % 10 == 0 {
                let claude = format!("{rel}/claude");
                write(
                    &dir.join("CLAUDE.md"),
                    &content(&claude, size_for(&claude), 0),
                )?;
            }
        }
        Ok(())
    }

    /// Rewrites package `p`'s `AGENTS.md` as revision `rev` (0 = original).
    /// Call [`Tree::begin_edits`] first and [`Tree::end_edits`] after
    /// restoring, so an interrupted run never leaves an edited tree marked
    /// complete.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    pub(crate) fn edit_package(&self, p: usize, rev: u32) -> io::Result<()> {
        let Shape::Wide { packages } = self.shape else {
            return Ok(());
        };
        let rel = package_rel(p);
        write(
            &self.root.join(&rel).join("AGENTS.md"),
            &content(&rel, package_size(p, packages), rev),
        )
    }

    /// Marks the tree as being edited.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    pub(crate) fn begin_edits(&self) -> io::Result<()> {
        match fs::remove_file(self.base.join(STAMP)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Marks the tree as pristine again (after every edit was undone).
    ///
    /// # Errors
    ///
    /// Any I/O error.
    pub(crate) fn end_edits(&self) -> io::Result<()> {
        write(&self.base.join(STAMP), b"ok")
    }

    /// The text a provider loads for package `p` (no BOM, valid UTF-8).
    pub(crate) fn package_text(&self, p: usize) -> String {
        let n = match self.shape {
            Shape::Wide { packages } => packages,
            _ => 0,
        };
        let rel = package_rel(p);
        String::from_utf8_lossy(&content(&rel, package_size(p, n), 0)).into_owned()
    }
}
