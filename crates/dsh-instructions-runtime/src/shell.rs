//! Shell touches (R-DISC-10): the paths a shell command's text names, found
//! by splitting it into words as a POSIX shell would — without expanding or
//! executing anything.
//!
//! The split is conservative: whatever it cannot read with certainty names
//! no path. Quote removal is `shlex`'s; this module finds the operators
//! (`&&`, `||`, `;`, `|`, `&`, newlines, parentheses, redirections) outside
//! quotes, follows a `cd DIR`, and unwraps one `bash|sh|zsh -c SCRIPT`.
//! Which of the candidates exist is the runtime's business (through the
//! provider, metadata only).

use camino::{Utf8Path, Utf8PathBuf};

/// At most this many candidate paths come out of one command (R-DISC-10).
pub const MAX_SHELL_TOUCHES: usize = 64;

/// A lexical token of the command text; words keep their quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A word as written (quotes intact; quote removal happens later).
    Word(String),
    /// A command separator: `;`, `&`, `&&`, `||`, `|`, `|&`, `(`, `)`.
    Separator,
    /// A line break: also a separator, and where a here-document begins.
    Newline,
    /// A redirection whose next word is a file: `<`, `>`, `>>`, `>|`, `<>`,
    /// `&>`, `&>>`.
    Redirect,
    /// `>&` or `<&`: the next word is a file descriptor (or `-`) unless it
    /// is something else, then a file.
    Duplicate,
    /// `<<` or `<<-`: a here-document (its body follows the line).
    HereDoc,
    /// `<<<`: the next word is a string, never a file.
    HereString,
}

/// The command text was not one we can read with certainty.
#[derive(Debug)]
struct Unparsed;

/// Splits `text` into tokens; `Err` for an unterminated quote, command
/// substitution or trailing backslash.
fn tokenize(text: &str) -> Result<Vec<Token>, Unparsed> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut i = 0;
    let end_word = |word: &mut String, in_word: &mut bool, tokens: &mut Vec<Token>| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' | '\r' => {
                end_word(&mut word, &mut in_word, &mut tokens);
                i += 1;
            }
            '\n' => {
                end_word(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Newline);
                i += 1;
            }
            '#' if !in_word => {
                // A comment runs to the end of the line.
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\'' => {
                let close = find(&chars, i + 1, '\'').ok_or(Unparsed)?;
                word.extend(&chars[i..=close]);
                in_word = true;
                i = close + 1;
            }
            '"' => {
                let close = escaped_end(&chars, i + 1, '"').ok_or(Unparsed)?;
                word.extend(&chars[i..=close]);
                in_word = true;
                i = close + 1;
            }
            '`' => {
                let close = escaped_end(&chars, i + 1, '`').ok_or(Unparsed)?;
                word.extend(&chars[i..=close]);
                in_word = true;
                i = close + 1;
            }
            '\\' => match next {
                None => return Err(Unparsed),
                // A line continuation joins the lines.
                Some('\n') => i += 2,
                Some(n) => {
                    word.push('\\');
                    word.push(n);
                    in_word = true;
                    i += 2;
                }
            },
            '$' if matches!(next, Some('(' | '{')) => {
                let (open, close) = if next == Some('(') {
                    ('(', ')')
                } else {
                    ('{', '}')
                };
                let end = nested_end(&chars, i + 2, open, close).ok_or(Unparsed)?;
                word.extend(&chars[i..=end]);
                in_word = true;
                i = end + 1;
            }
            ';' | '(' | ')' => {
                end_word(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Separator);
                i += if c == ';' && next == Some(';') { 2 } else { 1 };
            }
            '|' => {
                end_word(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Separator);
                i += if matches!(next, Some('|' | '&')) {
                    2
                } else {
                    1
                };
            }
            '&' => {
                end_word(&mut word, &mut in_word, &mut tokens);
                match next {
                    Some('&') => {
                        tokens.push(Token::Separator);
                        i += 2;
                    }
                    Some('>') => {
                        tokens.push(Token::Redirect);
                        i += if chars.get(i + 2) == Some(&'>') { 3 } else { 2 };
                    }
                    _ => {
                        tokens.push(Token::Separator);
                        i += 1;
                    }
                }
            }
            '<' | '>' => {
                // Digits right before a redirection are its file descriptor.
                if in_word && !word.is_empty() && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end_word(&mut word, &mut in_word, &mut tokens);
                let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
                let (token, len) = if rest.starts_with("<<<") {
                    (Token::HereString, 3)
                } else if rest.starts_with("<<-") {
                    (Token::HereDoc, 3)
                } else if rest.starts_with("<<") {
                    (Token::HereDoc, 2)
                } else if rest.starts_with(">&") || rest.starts_with("<&") {
                    (Token::Duplicate, 2)
                } else if rest.starts_with(">>") || rest.starts_with(">|") || rest.starts_with("<>")
                {
                    (Token::Redirect, 2)
                } else {
                    (Token::Redirect, 1)
                };
                tokens.push(token);
                i += len;
            }
            _ => {
                word.push(c);
                in_word = true;
                i += 1;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut tokens);
    Ok(tokens)
}

/// Index of the next `target` at or after `from`.
fn find(chars: &[char], from: usize, target: char) -> Option<usize> {
    chars[from.min(chars.len())..]
        .iter()
        .position(|&c| c == target)
        .map(|p| p + from)
}

/// The `close` ending text that starts at `from`, a backslash escaping
/// the next character: the closing `"` of a double-quoted string, the
/// closing backquote of a command substitution.
fn escaped_end(chars: &[char], from: usize, close: char) -> Option<usize> {
    let mut i = from;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == close => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The `close` matching an already opened `open`, counting nesting and
/// skipping quoted text.
fn nested_end(chars: &[char], from: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 1usize;
    let mut i = from;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            i += 2;
            continue;
        }
        if c == '\'' {
            i = find(chars, i + 1, '\'')? + 1;
            continue;
        }
        if c == '"' {
            i = escaped_end(chars, i + 1, '"')? + 1;
            continue;
        }
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// Quote removal of one raw word (no unquoted blanks in it by construction).
fn unquote(raw: &str) -> Result<String, Unparsed> {
    match shlex::split(raw) {
        Some(mut words) if words.len() == 1 => Ok(words.remove(0)),
        // `''` and `""` are one empty word for shlex too; anything else
        // means the word did not read the way the tokenizer thought.
        _ => Err(Unparsed),
    }
}

/// One simple command: its words (quotes removed) and redirection targets.
#[derive(Debug, Default)]
struct Command {
    words: Vec<String>,
    targets: Vec<String>,
}

/// Groups tokens into simple commands. Stops at the line that opens a
/// here-document: its body is text, not commands, and finding where it ends
/// is not worth the risk.
fn commands(tokens: &[Token]) -> Result<Vec<Command>, Unparsed> {
    let mut out = Vec::new();
    let mut current = Command::default();
    let mut heredoc_line = false;
    let mut iter = tokens.iter();
    while let Some(token) = iter.next() {
        match token {
            Token::Word(raw) => current.words.push(unquote(raw)?),
            Token::Separator => out.push(std::mem::take(&mut current)),
            Token::Newline => {
                out.push(std::mem::take(&mut current));
                if heredoc_line {
                    return Ok(out);
                }
            }
            Token::Redirect => {
                if let Some(Token::Word(raw)) = iter.next() {
                    current.targets.push(unquote(raw)?);
                }
            }
            Token::Duplicate => {
                if let Some(Token::Word(raw)) = iter.next() {
                    let word = unquote(raw)?;
                    if word != "-" && !word.chars().all(|c| c.is_ascii_digit()) {
                        current.targets.push(word);
                    }
                }
            }
            Token::HereDoc => {
                // The delimiter word is not a path.
                iter.next();
                heredoc_line = true;
            }
            Token::HereString => {
                iter.next();
            }
        }
    }
    out.push(current);
    Ok(out)
}

/// Whether a word may name a path: nothing in it would be expanded.
fn plain(word: &str) -> bool {
    let rest = word.strip_prefix("~/").unwrap_or(word);
    !word.is_empty() && !rest.contains(['$', '`', '*', '?', '[', '{', '~'])
}

/// `NAME=VALUE` before a command name (a variable assignment).
fn assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `word` against the current base: absolute and `~/` words stand alone.
fn against(base: &Utf8Path, word: &str) -> Utf8PathBuf {
    if word.starts_with('/') || word.starts_with("~/") {
        Utf8PathBuf::from(word)
    } else {
        base.join(word)
    }
}

/// Collects candidates in order, without repeats, up to the cap.
#[derive(Debug, Default)]
struct Found {
    paths: Vec<Utf8PathBuf>,
}

impl Found {
    fn full(&self) -> bool {
        self.paths.len() >= MAX_SHELL_TOUCHES
    }

    fn add(&mut self, base: &Utf8Path, word: &str) {
        if self.full() || !plain(word) {
            return;
        }
        let path = against(base, word);
        if !self.paths.contains(&path) {
            self.paths.push(path);
        }
    }
}

/// Whether `name` is a shell whose `-c SCRIPT` is unwrapped.
fn is_shell(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    matches!(base, "bash" | "sh" | "zsh")
}

/// The script of `bash -c SCRIPT` / `-lc` / `-cl` (options may precede).
fn shell_script(args: &[String]) -> Option<&str> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let flags = arg.strip_prefix('-')?;
        if !flags.is_empty()
            && flags.chars().all(|c| c.is_ascii_alphabetic())
            && flags.contains('c')
        {
            return iter.next().map(String::as_str);
        }
    }
    None
}

/// Walks the commands of `text` with `base` as the directory of relative
/// words; `depth` counts unwrapped shells. `Err` stops everything.
fn walk(text: &str, base: &Utf8Path, depth: u32, found: &mut Found) -> Result<(), Unparsed> {
    let tokens = tokenize(text)?;
    let commands = commands(&tokens)?;
    let mut base = base.to_owned();
    for command in commands {
        if found.full() {
            break;
        }
        let words: Vec<&str> = command
            .words
            .iter()
            .map(String::as_str)
            .skip_while(|w| assignment(w))
            .collect();
        if let Some((&name, args)) = words.split_first() {
            if name == "cd" {
                let dirs: Vec<&str> = args
                    .iter()
                    .copied()
                    .filter(|a| !matches!(*a, "-L" | "-P" | "--"))
                    .collect();
                match dirs.as_slice() {
                    [dir] if plain(dir) && *dir != "-" => {
                        found.add(&base, dir);
                        base = against(&base, dir);
                    }
                    // `cd`, `cd -`, `cd $X`: the base is unknown from here.
                    _ => return Ok(()),
                }
            } else if is_shell(name) {
                let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
                match shell_script(&args) {
                    Some(script) if depth == 0 => walk(script, &base, depth + 1, found)?,
                    // A nested wrapper is not unwrapped again.
                    Some(_) => {}
                    None => words_of(&base, &words, found),
                }
            } else {
                words_of(&base, &words, found);
            }
        }
        for target in &command.targets {
            found.add(&base, target);
        }
    }
    Ok(())
}

/// The candidate words of an ordinary command: every word except options;
/// an option's `=VALUE` is a word of its own.
fn words_of(base: &Utf8Path, words: &[&str], found: &mut Found) {
    for word in words {
        if let Some(option) = word.strip_prefix('-') {
            if let Some((_, value)) = option.split_once('=') {
                found.add(base, value);
            }
        } else {
            found.add(base, word);
        }
    }
}

/// The paths a shell command names (R-DISC-10): relative ones against the
/// call's base directory (joined lexically, not normalized), absolute ones
/// as written, `~/…` ones left for the caller to expand. In order, without
/// repeats, at most [`MAX_SHELL_TOUCHES`]. A command that does not parse
/// names nothing. Nothing is expanded or executed.
///
/// ```
/// use dsh_instructions_runtime::shell::command_paths;
/// let paths = command_paths("cd pkg && sed -n 1,20p 'a b.rs' | head > /tmp/out");
/// let paths: Vec<&str> = paths.iter().map(|p| p.as_str()).collect();
/// assert_eq!(paths, ["pkg", "pkg/sed", "pkg/1,20p", "pkg/a b.rs", "pkg/head", "/tmp/out"]);
/// assert!(command_paths("cat \"unterminated").is_empty());
/// assert!(command_paths("cat $HOME/x *.rs").iter().all(|p| p.as_str() == "cat"));
/// ```
pub fn command_paths(command: &str) -> Vec<Utf8PathBuf> {
    let mut found = Found::default();
    match walk(command, Utf8Path::new(""), 0, &mut found) {
        Ok(()) => found.paths,
        Err(Unparsed) => Vec::new(),
    }
}

/// Whether `command` runs a `cd` as one of its simple commands (after any
/// `NAME=VALUE` prefixes), looking once into a `bash|sh|zsh -c SCRIPT` as
/// [`command_paths`] does, so the shell's cwd after it may differ from the
/// one it started in. Read with the same lexer as [`command_paths`]: a `cd`
/// inside quotes or as part of a longer word is not one, and a command that
/// does not parse changes nothing.
///
/// ```
/// use dsh_instructions_runtime::shell::changes_directory;
/// assert!(changes_directory("cd s3 && cat f.txt"));
/// assert!(changes_directory("bash -lc 'cd s3; cat f.txt'"));
/// assert!(!changes_directory("grep 'cd x' notes.txt"));
/// ```
pub fn changes_directory(command: &str) -> bool {
    runs_cd(command, 0).unwrap_or(false)
}

/// [`changes_directory`] at shell-wrapper depth `depth`.
fn runs_cd(text: &str, depth: u32) -> Result<bool, Unparsed> {
    for command in commands(&tokenize(text)?)? {
        let mut words = command
            .words
            .iter()
            .map(String::as_str)
            .skip_while(|w| assignment(w));
        match words.next() {
            Some("cd") => return Ok(true),
            Some(name) if depth == 0 && is_shell(name) => {
                let args: Vec<String> = words.map(str::to_owned).collect();
                if let Some(script) = shell_script(&args)
                    && runs_cd(script, depth + 1)?
                {
                    return Ok(true);
                }
            }
            _ => {}
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    fn paths(command: &str) -> Vec<String> {
        command_paths(command)
            .into_iter()
            .map(Utf8PathBuf::into_string)
            .collect()
    }

    #[rstest]
    #[case::cat_relative("cat pkg/a.rs", &["cat", "pkg/a.rs"])]
    #[case::cat_absolute("cat /w/r/pkg/a.rs", &["cat", "/w/r/pkg/a.rs"])]
    #[case::sed_range("sed -n '1,20p' pkg/a.rs", &["sed", "1,20p", "pkg/a.rs"])]
    #[case::single_quotes("cat 'a b/c.rs'", &["cat", "a b/c.rs"])]
    #[case::double_quotes("cat \"a b/c.rs\"", &["cat", "a b/c.rs"])]
    #[case::backslash_space("cat a\\ b", &["cat", "a b"])]
    #[case::line_continuation("cat \\\n a.rs", &["cat", "a.rs"])]
    #[case::repeats_once("cat a a ./a", &["cat", "a", "./a"])]
    #[case::comment("cat a # b c", &["cat", "a"])]
    fn words(#[case] command: &str, #[case] expected: &[&str]) {
        assert_eq!(paths(command), expected);
    }

    #[rstest]
    #[case::and("cat a && cat b", &["cat", "a", "b"])]
    #[case::or("cat a||cat b", &["cat", "a", "b"])]
    #[case::semicolon("cat a;cat b", &["cat", "a", "b"])]
    #[case::pipe("cat a|grep x b", &["cat", "a", "grep", "x", "b"])]
    #[case::background("cat a & cat b", &["cat", "a", "b"])]
    #[case::newline("cat a\ncat b", &["cat", "a", "b"])]
    #[case::subshell("(cat a) && cat b", &["cat", "a", "b"])]
    #[case::quoted_operators("grep 'a && b;c|d' f", &["grep", "a && b;c|d", "f"])]
    fn operators_separate_commands(#[case] command: &str, #[case] expected: &[&str]) {
        assert_eq!(paths(command), expected);
    }

    #[rstest]
    #[case::and("cd pkg && cat a.rs", &["pkg", "pkg/cat", "pkg/a.rs"])]
    #[case::semicolon("cd pkg; cat a.rs", &["pkg", "pkg/cat", "pkg/a.rs"])]
    #[case::absolute("cd /w/r && cat a", &["/w/r", "/w/r/cat", "/w/r/a"])]
    #[case::twice("cd a && cd b && cat c", &["a", "a/b", "a/b/cat", "a/b/c"])]
    #[case::parent("cd .. && cat x", &["..", "../cat", "../x"])]
    #[case::absolute_word_after_cd("cd pkg && cat /w/x", &["pkg", "pkg/cat", "/w/x"])]
    #[case::words_before_cd_keep_the_old_base("cat a && cd pkg && cat a", &["cat", "a", "pkg", "pkg/cat", "pkg/a"])]
    #[case::cd_unknown_stops("cat a; cd $X && cat b", &["cat", "a"])]
    #[case::cd_home_stops("cd && cat b", &[])]
    #[case::cd_dash_stops("cd - && cat b", &[])]
    #[case::cd_tilde("cd ~/p && cat b", &["~/p", "~/p/cat", "~/p/b"])]
    fn cd_changes_the_base(#[case] command: &str, #[case] expected: &[&str]) {
        assert_eq!(paths(command), expected);
    }

    #[rstest]
    #[case::bash_lc("bash -lc 'cat pkg/a.rs'", &["cat", "pkg/a.rs"])]
    #[case::bash_c("bash -c \"cd pkg && cat a\"", &["pkg", "pkg/cat", "pkg/a"])]
    #[case::sh_c("sh -c 'cat a | head'", &["cat", "a", "head"])]
    #[case::zsh_abs("/bin/zsh -c 'cat a'", &["cat", "a"])]
    #[case::options_first("bash -e -c 'cat a'", &["cat", "a"])]
    #[case::after_cd("cd pkg && bash -lc 'cat a'", &["pkg", "pkg/cat", "pkg/a"])]
    #[case::one_level_only("bash -c \"bash -c 'cat a'\"", &[])]
    #[case::script_not_c("bash run.sh", &["bash", "run.sh"])]
    #[case::inner_cd_stays_inside("bash -c 'cd x' && cat a", &["x", "cat", "a"])]
    #[case::unparsable_script("bash -c 'cat \"a' && cat b", &[])]
    fn shell_wrapper_unwrapped_once(#[case] command: &str, #[case] expected: &[&str]) {
        assert_eq!(paths(command), expected);
    }

    #[rstest]
    #[case::output("cat a > out.txt", &["cat", "a", "out.txt"])]
    #[case::glued("cat a >out.txt", &["cat", "a", "out.txt"])]
    #[case::append("echo x >> log", &["echo", "x", "log"])]
    #[case::input("wc -l < in.txt", &["wc", "in.txt"])]
    #[case::fd_number("cmd 2>err.log", &["cmd", "err.log"])]
    #[case::fd_dup("cmd 2>&1 >&- x", &["cmd", "x"])]
    #[case::dup_to_file("cmd >&out.log", &["cmd", "out.log"])]
    #[case::both("cmd &> all.log", &["cmd", "all.log"])]
    #[case::here_string("grep x <<< 'a.rs'", &["grep", "x"])]
    #[case::heredoc_body_is_text("cat > f <<'EOF'\nrm b\nEOF\ncat c", &["cat", "f"])]
    #[case::option_value("rg --file=pats.txt -e x src", &["rg", "pats.txt", "x", "src"])]
    #[case::option_without_value("ls -la dir", &["ls", "dir"])]
    #[case::assignment_prefix("FOO=bar cat a", &["cat", "a"])]
    fn redirections_and_option_values(#[case] command: &str, #[case] expected: &[&str]) {
        assert_eq!(paths(command), expected);
    }

    #[rstest]
    #[case::variable("cat $F \"$G\" '${H}'", &["cat"])]
    #[case::substitution("cat $(ls) `ls` a", &["cat", "a"])]
    #[case::glob_star("cat *.rs", &["cat"])]
    #[case::glob_question("cat a?.rs", &["cat"])]
    #[case::glob_class("cat a[12].rs", &["cat"])]
    #[case::brace("cat {a,b}.rs", &["cat"])]
    #[case::tilde_user("cat ~bob/x ~ a~b", &["cat"])]
    #[case::tilde_home("cat ~/x", &["cat", "~/x"])]
    #[case::option_value_glob("rg --glob=*.rs x", &["rg", "x"])]
    fn expanded_words_name_no_path(#[case] command: &str, #[case] expected: &[&str]) {
        assert_eq!(paths(command), expected);
    }

    #[rstest]
    #[case::open_single("cat 'a")]
    #[case::open_double("cat \"a")]
    #[case::open_backquote("cat `a")]
    #[case::open_substitution("cat $(a")]
    #[case::trailing_backslash("cat a\\")]
    #[case::empty("")]
    #[case::only_operators("&& ; |")]
    fn unparsable_or_empty_names_nothing(#[case] command: &str) {
        assert!(paths(command).is_empty(), "{:?}", paths(command));
    }

    /// R-DISC-10: the post-command cwd only differs after a real `cd`.
    #[rstest]
    #[case::cd_then_cat("cd s3 && cat f.txt", true)]
    #[case::wrapped("bash -lc 'cd s3; cat f.txt'", true)]
    #[case::subshell("(cd s3 && ls)", true)]
    #[case::after_assignment("X=1 cd s3", true)]
    #[case::after_pipe("ls | cd s3", true)]
    #[case::plain("cat s3/f.txt", false)]
    #[case::word_with_cd("abcd cdrom/cd.txt", false)]
    #[case::cd_as_argument("echo cd", false)]
    #[case::quoted_cd("grep 'cd x' notes.txt", false)]
    #[case::double_quoted_cd("echo \"a; cd b\"", false)]
    #[case::commented_cd("ls # cd x", false)]
    #[case::nested_wrapper_not_read("bash -c \"sh -c 'cd x'\"", false)]
    #[case::unparsable("cd \"x", false)]
    fn only_a_cd_command_changes_directory(#[case] command: &str, #[case] changes: bool) {
        assert_eq!(changes_directory(command), changes);
    }

    #[test]
    fn at_most_the_cap() {
        let command: String = (0..100).map(|i| format!("f{i} ")).collect();
        let got = paths(&format!("cat {command}"));
        assert_eq!(got.len(), MAX_SHELL_TOUCHES);
        assert_eq!(got[0], "cat");
        assert_eq!(got[63], "f62");
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics_nor_yields_expansions(text in "\\PC{0,200}|[a-z/ .~$*?\\[{`'\"\\\\;&|<>()=\n-]{0,120}") {
            let got = command_paths(&text);
            prop_assert!(got.len() <= MAX_SHELL_TOUCHES);
            for path in &got {
                let s = path.as_str();
                let rest = s.strip_prefix("~/").unwrap_or(s);
                prop_assert!(!rest.contains(['$', '`', '*', '?', '[', '{', '~']), "{s:?} from {text:?}");
                prop_assert!(!s.is_empty());
            }
        }
    }
}
