//! Rust source as the tidy checks read it: comments and literals blanked,
//! `#[cfg(test)]` items removed, files listed in a stable order. A lexer of
//! this size is enough for the patterns the checks look for (paths, `use`
//! trees, item keywords at the top level) and is itself tested (`arch.rs`).

use std::path::{Path, PathBuf};

fn blank(out: &mut String, c: char) {
    out.push(if c == '\n' { '\n' } else { ' ' });
}

pub(crate) fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source with comments and the contents of string and character
/// literals replaced by spaces, newlines kept (so line numbers still hold).
pub(crate) fn code_only(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        let prev_ident = i > 0 && is_ident(chars[i - 1]);
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && !prev_ident && (at(i + 1) == '"' || at(i + 1) == '#') {
            let mut j = i + 1;
            while at(j) == '#' {
                j += 1;
            }
            if at(j) != '"' {
                out.push(c);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            for &k in &chars[i..=j] {
                blank(&mut out, k);
            }
            i = j + 1;
            while i < chars.len() {
                let closes = chars[i] == '"' && (1..=hashes).all(|h| at(i + h) == '#');
                if closes {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal (a lifetime has no closing quote).
            out.push(' ');
            i += 1;
            if at(i) == '\\' {
                out.push(' ');
                i += 1;
            }
            while i < chars.len() && chars[i] != '\'' {
                blank(&mut out, chars[i]);
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Blanks every `#[cfg(test)]` item of code from [`code_only`]; returns the
/// names of test modules declared without a body (`mod tests;`).
pub(crate) fn strip_test_items(code: &mut String) -> Vec<String> {
    const ATTR: &str = "#[cfg(test)]";
    let mut files = Vec::new();
    while let Some(start) = code.find(ATTR) {
        let bytes = code.as_bytes();
        let mut end = start + ATTR.len();
        let mut depth = 0usize;
        let mut header = String::new();
        while end < bytes.len() {
            let b = bytes[end];
            end += 1;
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                b';' if depth == 0 => break,
                _ if depth == 0 => header.push(b as char),
                _ => {}
            }
        }
        let words: Vec<&str> = header.split_whitespace().collect();
        if let [.., "mod", name] = words[..]
            && code.as_bytes()[end - 1] == b';'
        {
            files.push(name.to_owned());
        }
        let blanked: String = code[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(start..end, &blanked);
    }
    files
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// [`code_only`] with the `#[cfg(test)]` items removed: the code a crate
/// ships.
pub(crate) fn shipped_code(src: &str) -> String {
    let mut code = code_only(src);
    strip_test_items(&mut code);
    code
}

/// The files of `src/` a crate ships, with their code as [`shipped_code`]
/// leaves it: every `.rs` file except those declared by a `#[cfg(test)] mod
/// name;` (test-only files), in path order.
pub(crate) fn shipped_files(src: &Path) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut test_files = std::collections::BTreeSet::new();
    let mut coded = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
        let mut code = code_only(&text);
        let tests = strip_test_items(&mut code);
        let dir = match file.file_stem().and_then(|s| s.to_str()) {
            Some("lib" | "main" | "mod") => file.parent().map(Path::to_owned),
            _ => Some(file.with_extension("")),
        };
        if let Some(dir) = dir {
            for t in tests {
                test_files.insert(dir.join(format!("{t}.rs")));
                test_files.insert(dir.join(&t).join("mod.rs"));
            }
        }
        coded.push((file, code));
    }
    coded.retain(|(f, _)| !test_files.contains(f));
    Ok(coded)
}
