//! The memo's file format: a header, the log's and the settings' stamps,
//! the session's cwd (when the memo holds a claim), the keys and claims
//! with their reasons, the probe batches stamped whole and one line per
//! path stamp (`k` for a known directory's, decision 0085); decoded line
//! by line, in place.

use std::collections::{BTreeSet, HashMap};

use camino::Utf8Path;

use super::stamp::{Look, Stamp, look};

/// First line of the format.
pub(super) const HEADER: &str = "dsh-quiet-memo 2";

/// The memo as stored.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Memo {
    pub(super) log: Option<Stamp>,
    pub(super) settings: Option<Stamp>,
    /// The session's cwd, which a claim's touches are read against.
    pub(super) cwd: Option<String>,
    /// Key and its event's reason, oldest first.
    pub(super) keys: Vec<(String, String)>,
    /// Claims (decision 0085): a file or directory touch that reaches only
    /// the `known` directories answers as the event that wrote it did;
    /// each its key and reason, oldest first.
    pub(super) claims: Vec<(String, String)>,
    /// The known directories below the cwd (each with a target stamp in
    /// `paths`, written as a `k` line).
    pub(super) known: BTreeSet<String>,
    /// Digests of the probe batches whose every path is stamped below
    /// (`remember::batch_digest`): a later event asking the same batch (the known
    /// directories, every event) adds its key without stamping it again.
    pub(super) batches: BTreeSet<String>,
    /// Every path's stamp, by how it is looked at.
    pub(super) paths: PathStamps,
}

/// The paths of an earlier memo whose stamps no longer hold.
#[derive(Debug, Default)]
pub(super) struct Changed {
    pub(super) entries: std::collections::HashSet<String>,
    pub(super) targets: std::collections::HashSet<String>,
}

impl Changed {
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.targets.is_empty()
    }
}

/// Stamps by path, one map for each way of looking.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct PathStamps {
    pub(super) entries: HashMap<String, Stamp>,
    pub(super) targets: HashMap<String, Stamp>,
}

impl PathStamps {
    pub(super) fn map(&self, how: Look) -> &HashMap<String, Stamp> {
        match how {
            Look::Entry => &self.entries,
            Look::Target => &self.targets,
        }
    }

    pub(super) fn get(&self, path: &str, how: Look) -> Option<Stamp> {
        self.map(how).get(path).copied()
    }

    pub(super) fn insert(&mut self, path: &str, how: Look, stamp: Stamp) {
        let map = match how {
            Look::Entry => &mut self.entries,
            Look::Target => &mut self.targets,
        };
        map.insert(path.to_owned(), stamp);
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len() + self.targets.len()
    }

    pub(super) fn extend(&mut self, other: Self) {
        self.entries.extend(other.entries);
        self.targets.extend(other.targets);
    }

    /// Every stamp, by path (byte order) and way of looking.
    pub(super) fn sorted(&self) -> Vec<(&str, Look, Stamp)> {
        let mut all: Vec<(&str, Look, Stamp)> = [Look::Entry, Look::Target]
            .into_iter()
            .flat_map(|how| {
                self.map(how)
                    .iter()
                    .map(move |(p, s)| (p.as_str(), how, *s))
            })
            .collect();
        all.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        all
    }

    /// Keeps those still as stamped (each looked at again) and returns
    /// the paths of the others.
    pub(super) fn retain_holding(&mut self) -> Changed {
        let mut changed = Changed::default();
        self.entries.retain(|path, stamp| {
            let holds = look(Utf8Path::new(path), Look::Entry).ok() == Some(*stamp);
            if !holds {
                changed.entries.insert(path.clone());
            }
            holds
        });
        self.targets.retain(|path, stamp| {
            let holds = look(Utf8Path::new(path), Look::Target).ok() == Some(*stamp);
            if !holds {
                changed.targets.insert(path.clone());
            }
            holds
        });
        changed
    }
}

pub(super) fn encode_stamp(out: &mut String, s: &Stamp) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for w in s.0 {
        out.push(' ');
        // Lowercase hex without leading zeros (one digit for zero).
        let digits = (64 - w.leading_zeros()).div_ceil(4).max(1);
        for i in (0..digits).rev() {
            out.push(char::from(DIGITS[((w >> (i * 4)) & 0xf) as usize]));
        }
    }
}

/// A word of [`encode_stamp`]: 1 to 16 lowercase hex digits.
pub(super) fn hex(field: &str) -> Option<u64> {
    if field.is_empty() || field.len() > 16 {
        return None;
    }
    field.bytes().try_fold(0u64, |acc, b| {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => return None,
        };
        Some(acc << 4 | u64::from(digit))
    })
}

pub(super) fn decode_stamp<'a>(fields: &mut impl Iterator<Item = &'a str>) -> Option<Stamp> {
    let mut words = [0u64; 8];
    for w in &mut words {
        *w = hex(fields.next()?)?;
    }
    Some(Stamp(words))
}

/// One path line: how, stamp, path, and whether it is a known
/// directory's (`k`, a target stamp). Parsed byte by byte: the fast path
/// reads thousands of them.
pub(super) fn decode_path_line(line: &str) -> Option<(Look, Stamp, &str, bool)> {
    let bytes = line.as_bytes();
    let (how, known) = match bytes.first()? {
        b'e' => (Look::Entry, false),
        b't' => (Look::Target, false),
        b'k' => (Look::Target, true),
        _ => return None,
    };
    let mut at = 1;
    let mut words = [0u64; 8];
    for w in &mut words {
        (*bytes.get(at)? == b' ').then_some(())?;
        at += 1;
        let start = at;
        let mut value = 0u64;
        while let Some(&b) = bytes.get(at) {
            let digit = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                _ => break,
            };
            value = value << 4 | u64::from(digit);
            at += 1;
        }
        (at > start && at - start <= 16).then_some(())?;
        *w = value;
    }
    (*bytes.get(at)? == b' ').then_some(())?;
    // The path (which may hold spaces) is the rest.
    let path = line.get(at + 1..)?;
    path.starts_with('/')
        .then_some((how, Stamp(words), path, known))
}

/// The lines of a memo after its header, or `None` when `bytes` are not
/// of this format or torn (every encoding ends its last line).
pub(super) fn body(bytes: &[u8]) -> Option<std::str::Split<'_, char>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.strip_suffix('\n')?.split('\n');
    (lines.next()? == HEADER).then_some(lines)
}

/// The stamp of a `log` or `settings` line (`None` inside for `-`).
pub(super) fn decode_session_line(line: Option<&str>, tag: &str) -> Option<Option<Stamp>> {
    let rest = line?.strip_prefix(tag)?.strip_prefix(' ')?;
    if rest == "-" {
        Some(None)
    } else {
        decode_stamp(&mut rest.split(' ')).map(Some)
    }
}

/// One line of a memo after its log and settings lines.
pub(super) enum Line<'a> {
    /// The session's cwd.
    Cwd(&'a str),
    /// A key and its event's reason.
    Key(&'a str, &'a str),
    /// A claim's key and its event's reason.
    Claim(&'a str, &'a str),
    /// A probe batch stamped whole.
    Batch(&'a str),
    /// A path's stamp; `true` for a known directory's.
    Path(Look, Stamp, &'a str, bool),
}

/// The log and settings stamps of a memo and its other lines, each `None`
/// when it is not of this format; `None` for a memo not of it at all.
pub(super) fn parse(
    bytes: &[u8],
) -> Option<(
    Option<Stamp>,
    Option<Stamp>,
    impl Iterator<Item = Option<Line<'_>>>,
)> {
    let mut lines = body(bytes)?;
    let log = decode_session_line(lines.next(), "log")?;
    let settings = decode_session_line(lines.next(), "settings")?;
    let rest = lines.map(|line| {
        if let Some(rest) = line.strip_prefix("key ") {
            rest.split_once(' ').map(|(k, w)| Line::Key(k, w))
        } else if let Some(rest) = line.strip_prefix("claim ") {
            rest.split_once(' ').map(|(k, w)| Line::Claim(k, w))
        } else if let Some(cwd) = line.strip_prefix("cwd ") {
            cwd.starts_with('/').then_some(Line::Cwd(cwd))
        } else if let Some(batch) = line.strip_prefix("batch ") {
            Some(Line::Batch(batch))
        } else {
            decode_path_line(line)
                .map(|(how, stamp, path, known)| Line::Path(how, stamp, path, known))
        }
    });
    Some((log, settings, rest))
}

impl Memo {
    pub(super) fn encode(&self) -> String {
        let mut out = String::with_capacity(64 + self.paths.len() * 120);
        out.push_str(HEADER);
        out.push('\n');
        for (tag, stamp) in [("log", &self.log), ("settings", &self.settings)] {
            out.push_str(tag);
            match stamp {
                Some(s) => encode_stamp(&mut out, s),
                None => out.push_str(" -"),
            }
            out.push('\n');
        }
        if let Some(cwd) = &self.cwd {
            out.push_str("cwd ");
            out.push_str(cwd);
            out.push('\n');
        }
        let keys = self.keys.iter().map(|k| ("key ", k));
        for (tag, (key, why)) in keys.chain(self.claims.iter().map(|c| ("claim ", c))) {
            out.push_str(tag);
            out.push_str(key);
            out.push(' ');
            // One line: a reason never holds a line break, but a
            // configuration warning might quote one.
            out.push_str(&why.replace(['\n', '\r'], " "));
            out.push('\n');
        }
        for batch in &self.batches {
            out.push_str("batch ");
            out.push_str(batch);
            out.push('\n');
        }
        for (path, how, stamp) in self.paths.sorted() {
            let known = how == Look::Target && self.known.contains(path);
            out.push(if known { 'k' } else { how.tag() });
            encode_stamp(&mut out, &stamp);
            out.push(' ');
            out.push_str(path);
            out.push('\n');
        }
        out
    }

    /// The memo `bytes` hold; `None` for anything not of this format or
    /// torn.
    pub(super) fn decode(bytes: &[u8]) -> Option<Self> {
        let (log, settings, lines) = parse(bytes)?;
        let mut memo = Self {
            log,
            settings,
            ..Self::default()
        };
        for line in lines {
            match line? {
                Line::Cwd(cwd) => memo.cwd = Some(cwd.to_owned()),
                Line::Key(key, why) => memo.keys.push((key.to_owned(), why.to_owned())),
                Line::Claim(key, why) => memo.claims.push((key.to_owned(), why.to_owned())),
                Line::Batch(batch) => {
                    memo.batches.insert(batch.to_owned());
                }
                Line::Path(how, stamp, path, known) => {
                    if known {
                        memo.known.insert(path.to_owned());
                    }
                    memo.paths.insert(path, how, stamp);
                }
            }
        }
        Some(memo)
    }
}
