//! The shell command policy: which command lines are refused in every mode, which
//! run without asking, and what happens to everything else.
//!
//! A line is judged by the simple commands it would run (see [`parse`]), never by
//! substring: each one is checked against the deny prefixes first (a match refuses
//! the whole line, in every mode), and the line is trusted only when every one of
//! them matches a trusted prefix. Plan mode runs no shell at all; agent mode runs
//! trusted lines and asks the host about the rest; yolo mode skips the asking.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

pub mod parse;

/// Deny and trust rules. Each rule is a command prefix written as shell words; it
/// matches a simple command whose leading words equal its words. The command word
/// is compared by file name (`/usr/bin/sudo` is `sudo`), a trailing `*` on a rule's
/// command word matches any suffix (`mkfs*`), and short-flag clusters compare as
/// sets (`-rf` equals `-fr`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExecPolicy {
    /// Always refused, in every mode; checked before anything else.
    pub deny_prefixes: Vec<String>,
    /// Run without asking in agent mode.
    pub trusted_prefixes: Vec<String>,
}

const DEFAULT_DENY: &[&str] = &[
    "rm -rf /",
    "rm -rf /*",
    "rm -rf ~",
    "rm -rf ~/",
    "rm -rf ~/*",
    "rm -rf $HOME",
    "rm -rf --no-preserve-root",
    "sudo",
    "su",
    "doas",
    "pkexec",
    "mkfs*",
    "wipefs",
    "fdisk",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "init 0",
    "init 6",
    "systemctl poweroff",
    "systemctl reboot",
    "systemctl halt",
    "chmod -R 777 /",
    "kill -9 -1",
    "kill -KILL -1",
];

const DEFAULT_TRUSTED: &[&str] = &[
    "cd",
    "export",
    "set",
    "exit",
    ":",
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    "test",
    "sleep",
    "seq",
    "which",
    "command -v",
    "type",
    "file",
    "stat",
    "du",
    "df",
    "tree",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "date",
    "uname",
    "whoami",
    "id",
    "env",
    "nproc",
    "grep",
    "rg",
    "fd",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "jq",
    "md5sum",
    "sha256sum",
    "git status",
    "git diff",
    "git log",
    "git show",
    "git rev-parse",
    "git ls-files",
    "git blame",
    "git branch --show-current",
    "cargo test",
    "cargo build",
    "cargo check",
    "cargo clippy",
    "cargo nextest",
    "cargo tree",
    "cargo metadata",
    "cargo fmt --check",
    "cargo --version",
    "rustc --version",
    "go test",
    "go build",
    "go vet",
    "npm test",
    "pytest",
    "python -m pytest",
    "python3 -m pytest",
];

impl Default for ExecPolicy {
    fn default() -> Self {
        ExecPolicy {
            deny_prefixes: DEFAULT_DENY.iter().map(|s| s.to_string()).collect(),
            trusted_prefixes: DEFAULT_TRUSTED.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// The policy's judgement of one command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// `command` (one simple command of the line) matches the deny rule `rule`.
    Denied { rule: String, command: String },
    /// Every simple command matches a trusted rule.
    Trusted,
    /// `command` is not covered by a trusted rule, for `reason`.
    Untrusted { command: String, reason: String },
}

/// How a command line got permission to run; reported in result metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permit {
    /// Trusted by a rule, or the tool's own fixed command, or the user's config.
    Trusted,
    /// Asked and approved just now.
    Approved,
    /// Approved earlier and remembered (a project MCP server).
    Remembered,
    Yolo,
    /// Not asked: a model's line in agent mode that runs inside an enforced
    /// OS sandbox, which is the boundary (asking is for leaving it).
    Sandboxed,
}

impl Permit {
    pub fn as_str(self) -> &'static str {
        match self {
            Permit::Trusted => "trusted",
            Permit::Approved => "approved",
            Permit::Remembered => "remembered",
            Permit::Yolo => "yolo",
            Permit::Sandboxed => "sandboxed",
        }
    }
}

/// One simple command after wrappers were peeled off, ready to be judged.
struct Checked {
    /// The words at each peeling stage (`nohup env X=1 ls` → `nohup …`, `env …`, `ls`);
    /// deny rules are tried on all of them, so a rule can name a wrapper too.
    stages: Vec<Vec<String>>,
    writes_file: bool,
    /// A `bash -c SCRIPT` or `eval`: judged by the commands of its script instead.
    transparent: bool,
}

impl Checked {
    fn shown(&self) -> String {
        self.stages.first().map(|w| w.join(" ")).unwrap_or_else(|| "(redirection)".into())
    }

    fn words(&self) -> &[String] {
        self.stages.last().map(Vec::as_slice).unwrap_or(&[])
    }
}

impl ExecPolicy {
    pub fn evaluate(&self, line: &str) -> Verdict {
        let deny = rules(&self.deny_prefixes);
        let trusted = rules(&self.trusted_prefixes);
        let checked = match expand(line, 0) {
            Ok(checked) => checked,
            Err(reason) => {
                // Unparseable lines are untrusted; still refuse them when a loose
                // reading finds a denied command, so broken syntax is no way around deny.
                let loose = loose_commands(line);
                if let Some(verdict) = denied(&deny, &loose) {
                    return verdict;
                }
                return Verdict::Untrusted {
                    command: line.trim().to_string(),
                    reason: format!("it cannot be parsed ({reason})"),
                };
            }
        };
        if let Some(verdict) = denied(&deny, &checked) {
            return verdict;
        }
        for cmd in &checked {
            let reason = if cmd.writes_file {
                Some("it redirects output into a file")
            } else if cmd.transparent {
                None
            } else if cmd.words().first().is_some_and(|w| is_dynamic(w)) {
                Some("its command name is only known when it runs")
            } else if let Some(reason) = side_effect_option(cmd.words()) {
                Some(reason)
            } else if !trusted.iter().any(|rule| matches(rule, cmd.words())) {
                Some("no trusted rule covers it")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Verdict::Untrusted { command: cmd.shown(), reason: reason.to_string() };
            }
        }
        Verdict::Trusted
    }
}

fn rules(list: &[String]) -> Vec<Vec<String>> {
    list.iter()
        .map(|rule| shlex::split(rule).unwrap_or_else(|| rule.split_whitespace().map(str::to_string).collect()))
        .filter(|words| !words.is_empty())
        .collect()
}

fn denied(deny: &[Vec<String>], checked: &[Checked]) -> Option<Verdict> {
    for cmd in checked {
        for stage in &cmd.stages {
            if let Some(rule) = deny.iter().find(|rule| matches(rule, stage)) {
                return Some(Verdict::Denied { rule: rule.join(" "), command: cmd.shown() });
            }
        }
    }
    None
}

fn matches(rule: &[String], words: &[String]) -> bool {
    rule.len() <= words.len() && rule.iter().zip(words).enumerate().all(|(k, (r, w))| word_matches(r, w, k == 0))
}

fn word_matches(rule: &str, word: &str, is_command: bool) -> bool {
    if is_command {
        let name = if rule.contains('/') { word } else { word.rsplit('/').next().unwrap_or(word) };
        return match rule.strip_suffix('*') {
            Some(prefix) if !prefix.is_empty() => name.starts_with(prefix),
            _ => name == rule,
        };
    }
    rule == word || short_flags(rule).is_some_and(|flags| short_flags(word) == Some(flags))
}

/// `-rf` → {f, r}; anything else (long options, plain words) → None.
fn short_flags(word: &str) -> Option<BTreeSet<char>> {
    let letters = word.strip_prefix('-')?;
    (!letters.is_empty() && letters.chars().all(|c| c.is_ascii_alphabetic())).then(|| letters.chars().collect())
}

/// A word whose value depends on expansion at run time.
fn is_dynamic(word: &str) -> bool {
    word.contains(['$', '`', '…'])
}

/// Parses `line` into judged commands, following `bash -c` and `eval` into their scripts.
fn expand(line: &str, depth: usize) -> Result<Vec<Checked>, String> {
    if depth > 4 {
        return Err("shells nest too deeply to check".into());
    }
    let mut out = Vec::new();
    for cmd in parse::split(line)? {
        let checked = peel(cmd.words, cmd.writes_file);
        let script = inline_script(checked.words());
        match script {
            Some(script) => {
                let inner = expand(&script, depth + 1)?;
                out.push(Checked { transparent: true, ..checked });
                out.extend(inner);
            }
            None => out.push(checked),
        }
    }
    Ok(out)
}

/// The same judging over a rough split, for lines the parser rejects.
fn loose_commands(line: &str) -> Vec<Checked> {
    line.split(|c: char| ";&|()`<>{}\n".contains(c) || c == '$')
        .map(|part| part.split_whitespace().map(|w| w.replace(['\'', '"', '\\'], "")).collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .map(|words| peel(words, false))
        .collect()
}

/// Strips assignments, reserved words and command wrappers, recording each stage.
fn peel(words: Vec<String>, writes_file: bool) -> Checked {
    let mut words = strip_leading(words);
    let mut stages = Vec::new();
    if !words.is_empty() {
        stages.push(words.clone());
        while let Some(rest) = unwrap_wrapper(&words) {
            let rest = strip_leading(rest);
            if rest.is_empty() {
                break;
            }
            words = rest;
            stages.push(words.clone());
        }
    }
    Checked { stages, writes_file, transparent: false }
}

const RESERVED: &[&str] =
    &["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "case", "esac", "{", "}", "!", "function"];

/// Drops `NAME=value` assignments and reserved words in front of the command word.
fn strip_leading(words: Vec<String>) -> Vec<String> {
    let skip = words.iter().take_while(|w| is_assignment(w) || RESERVED.contains(&w.as_str())).count();
    let mut words: Vec<String> = words.into_iter().skip(skip).collect();
    // A trailing `}` closes a group; it is no argument of the command.
    if words.len() > 1 && words.last().is_some_and(|w| w == "}") {
        words.pop();
    }
    words
}

fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else { return false };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// For a command that runs another command (`env X=1 cmd`, `nohup cmd`, `timeout 5 cmd`),
/// the inner command's words.
fn unwrap_wrapper(words: &[String]) -> Option<Vec<String>> {
    let (first, args) = words.split_first()?;
    let name = first.rsplit('/').next().unwrap_or(first);
    // Options of each wrapper that take a separate value.
    let valued: &[&str] = match name {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e"],
        "exec" => &["-a"],
        "command" if args.first().is_some_and(|a| a == "-v" || a == "-V") => return None,
        "command" | "builtin" | "nohup" | "time" => &[],
        _ => return None,
    };
    let mut k = 0;
    while let Some(arg) = args.get(k) {
        if arg == "--" {
            k += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        k += if valued.contains(&arg.as_str()) { 2 } else { 1 };
    }
    if name == "timeout" {
        k += 1; // the duration
    }
    Some(args.iter().skip(k).cloned().collect())
}

/// Options that turn an otherwise read-only trusted command into one that runs
/// other programs or writes files (`fd -x`, `rg --pre`, `sort -o`, `uniq IN OUT`,
/// `git log --output=F`): such a command is judged untrusted.
fn side_effect_option(words: &[String]) -> Option<&'static str> {
    let (first, args) = words.split_first()?;
    let name = first.rsplit('/').next().unwrap_or(first);
    let has = |opts: &[&str]| {
        args.iter().any(|a| opts.iter().any(|o| a == o || (o.starts_with("--") && a.starts_with(&format!("{o}=")))))
    };
    match name {
        "fd" | "fdfind" if has(&["-x", "--exec", "-X", "--exec-batch"]) => Some("it runs a command for each match"),
        "rg" if has(&["--pre"]) => Some("it runs a preprocessor command"),
        "sort" if has(&["-o", "--output"]) || args.iter().any(|a| a.starts_with("-o")) => {
            Some("it writes its output to a file")
        }
        "git" if has(&["--output", "-o"]) => Some("it writes its output to a file"),
        "uniq" if args.iter().filter(|a| !a.starts_with('-')).count() > 1 => Some("it writes its output to a file"),
        _ => None,
    }
}

/// The script of `bash -c SCRIPT` (any common shell, flags combined or not),
/// `eval ARGS` or `env -S STRING` (which splits STRING into a command line).
fn inline_script(words: &[String]) -> Option<String> {
    let (first, args) = words.split_first()?;
    let name = first.rsplit('/').next().unwrap_or(first);
    if name == "eval" {
        return Some(args.join(" "));
    }
    if name == "env" {
        for (i, arg) in args.iter().enumerate() {
            let inline = arg
                .strip_prefix("--split-string=")
                .or_else(|| arg.strip_prefix("-S").filter(|s| !s.is_empty() && !arg.starts_with("--")));
            if let Some(script) = inline {
                return Some(
                    std::iter::once(script.to_string())
                        .chain(args[i + 1..].iter().cloned())
                        .collect::<Vec<_>>()
                        .join(" "),
                );
            }
            if arg == "-S" || arg == "--split-string" {
                return Some(args[i + 1..].join(" "));
            }
            if !arg.starts_with('-') {
                break;
            }
        }
        return None;
    }
    if !["sh", "bash", "dash", "zsh", "ksh"].contains(&name) {
        return None;
    }
    let mut k = 0;
    let mut has_c = false;
    while let Some(arg) = args.get(k) {
        if matches!(arg.as_str(), "-o" | "+o" | "-O" | "+O") {
            k += 2;
            continue;
        }
        if arg.starts_with("--") {
            k += 1;
            continue;
        }
        if let Some(flags) = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+')) {
            has_c |= flags.contains('c');
            k += 1;
            continue;
        }
        break;
    }
    has_c.then(|| args.get(k).cloned().unwrap_or_default())
}

impl ExecPolicy {
    /// This policy plus the `[exec_policy]` rules of the lifecycle manifest.
    pub fn with_rules(&self, rules: &crate::manifest::ExecRules) -> ExecPolicy {
        let mut out = self.clone();
        out.deny_prefixes.extend(rules.deny_prefixes.iter().cloned());
        out.trusted_prefixes.extend(rules.trusted_prefixes.iter().cloned());
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "exec_policy_tests.rs"]
mod tests;
