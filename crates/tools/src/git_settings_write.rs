//! Which model-written lines write git's own settings, so the command gate can
//! ask for them by name before anything runs.
//!
//! The sandbox keeps `.git/config` (and `.git/info`, `.git/modules`,
//! `.git/worktrees`) read-only, because git runs commands named there —
//! `core.fsmonitor`, `core.pager`, filters — on the user's next ordinary git
//! command. Some ordinary work writes them on purpose (`git remote add`,
//! `git config user.email`, `git push -u`), and inside the sandbox git's
//! lock-and-rename then fails with "Device or resource busy". Recognised up
//! front, such a line becomes a question that names what it writes, or, with
//! nobody to ask, a refusal that says why, instead of a failed run.
//!
//! Recognition is by parse and leans towards asking: a line it misses still
//! runs in the sandbox, where the write fails and is explained afterwards
//! (`Grant::blocked_by`); a line it matches by mistake costs one question.

use quiver_engine::permissions::exec_policy::parse::split;

/// What a line writes of git's protected files, for the approval question:
/// `("git remote add", ".git/config")`. `None` for lines that write none (as
/// far as the parse can tell) or cannot be parsed.
pub fn protected_git_write(line: &str) -> Option<(String, &'static str)> {
    split(line).ok()?.iter().find_map(|command| git_write(&command.words))
}

/// Git's options that come before the subcommand and take a separate value.
const GLOBAL_OPTIONS_WITH_VALUE: &[&str] =
    &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path", "--super-prefix"];

fn git_write(words: &[String]) -> Option<(String, &'static str)> {
    // `VAR=value git …` and `env VAR=value git …` run git all the same.
    let mut rest = words.iter().map(String::as_str).skip_while(|w| is_assignment(w) || *w == "env");
    let program = rest.next()?;
    if program.rsplit('/').next() != Some("git") {
        return None;
    }
    let mut rest = rest.peekable();
    while let Some(word) = rest.next_if(|w| w.starts_with('-')) {
        if GLOBAL_OPTIONS_WITH_VALUE.contains(&word) {
            rest.next();
        }
    }
    let subcommand = rest.next()?;
    let args: Vec<&str> = rest.collect();
    let has = |flags: &[&str]| args.iter().any(|a| flags.iter().any(|f| a == f || a.starts_with(&format!("{f}="))));
    let first_plain = args.iter().find(|a| !a.starts_with('-')).copied();
    let named = |action: &str| format!("git {subcommand} {action}");
    match subcommand {
        "config" => config_writes(&args).then(|| ("git config".to_string(), ".git/config")),
        "remote" => match first_plain {
            Some(action @ ("add" | "rename" | "remove" | "rm" | "set-url" | "set-branches")) => {
                Some((named(action), ".git/config"))
            }
            _ => None,
        },
        "branch" if has(&["-u", "--set-upstream-to", "--unset-upstream", "--track", "-t"]) => {
            Some(("git branch (upstream)".into(), ".git/config"))
        }
        "branch" if has(&["-m", "-M", "--move", "-c", "-C", "--copy"]) => {
            Some(("git branch (rename or copy)".into(), ".git/config"))
        }
        "push" if has(&["-u", "--set-upstream"]) => Some(("git push --set-upstream".into(), ".git/config")),
        "checkout" | "switch" if has(&["--track", "-t"]) => Some((format!("git {subcommand} --track"), ".git/config")),
        "submodule" => match first_plain {
            Some(action @ ("add" | "init" | "sync" | "set-url" | "set-branch" | "deinit" | "absorbgitdirs")) => {
                Some((named(action), ".git/config and .git/modules"))
            }
            Some("update") if has(&["--init"]) => Some((named("update --init"), ".git/config and .git/modules")),
            _ => None,
        },
        "worktree" => match first_plain {
            Some(action @ ("add" | "move" | "remove" | "prune" | "repair" | "lock" | "unlock")) => {
                Some((named(action), ".git/worktrees"))
            }
            _ => None,
        },
        "sparse-checkout" => match first_plain {
            Some(action @ ("init" | "set" | "add" | "reapply" | "disable")) => {
                Some((named(action), ".git/config and .git/info"))
            }
            _ => None,
        },
        "lfs" if first_plain == Some("install") => Some(("git lfs install".into(), ".git/config and .git/hooks")),
        _ => None,
    }
}

/// `git config …` writes the repository's config unless it only reads, or
/// writes another file (`--global`, `--system`, `--file`, `--blob`).
fn config_writes(args: &[&str]) -> bool {
    const ELSEWHERE: &[&str] = &["--global", "--system", "--file", "-f", "--blob"];
    const READS: &[&str] =
        &["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list"];
    const WRITES: &[&str] =
        &["--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit"];
    let flag = |set: &[&str]| args.iter().any(|a| set.iter().any(|f| a == f || a.starts_with(&format!("{f}="))));
    if flag(ELSEWHERE) || flag(READS) {
        return false;
    }
    if flag(WRITES) {
        return true;
    }
    // Options that take a value must not count as the key or the value.
    let mut plain = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if matches!(*word, "--type" | "--default" | "--comment" | "--value") {
            words.next();
        } else if !word.starts_with('-') {
            plain.push(*word);
        }
    }
    match plain.first() {
        // The subcommand form of git 2.46 and later.
        Some(&("set" | "unset" | "rename-section" | "remove-section" | "edit")) => true,
        Some(&("get" | "list")) => false,
        // `git config KEY VALUE` sets; `git config KEY` reads.
        _ => plain.len() >= 2,
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=')
        .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

#[cfg(test)]
#[path = "git_settings_write_tests.rs"]
mod tests;
