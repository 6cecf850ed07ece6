//! Command lines in a request: `make`, `cargo build`, `uname -a`,
//! `git log --oneline -10`, `make clean && make`, `./configure`.
//!
//! People type the command they want run, not "run a shell command". The
//! command's words are its argument, like a path's: `make` is not the verb
//! "make" (create), `install` in `pip install` is no request to install
//! anything by other means. So a request that carries a command line counts
//! as saying "command", its program name is a literal value, and its verb is
//! "run" whatever word opens it.

/// Programs people name as the first word of a command line. Only programs
/// whose name is not also the everyday word for a tool of their own: `ls`,
/// `cat`, `grep`, `find` and the test runners (`pytest`) name what they do,
/// and a catalog with a tool for that should get them by that word.
const PROGRAMS: &[&str] = &[
    "make",
    "cmake",
    "ninja",
    "cargo",
    "rustc",
    "rustup",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "node",
    "deno",
    "bun",
    "pip",
    "pip3",
    "pipx",
    "python",
    "python3",
    "poetry",
    "uv",
    "go",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "curl",
    "wget",
    "uname",
    "df",
    "du",
    "ps",
    "top",
    "htop",
    "free",
    "lsof",
    "netstat",
    "ssh",
    "scp",
    "rsync",
    "tar",
    "unzip",
    "chmod",
    "chown",
    "gcc",
    "clang",
    "javac",
    "mvn",
    "gradle",
    "dotnet",
    "bundle",
    "gem",
    "rake",
    "composer",
    "brew",
    "apt",
    "apt-get",
    "systemctl",
    "journalctl",
    "whoami",
    "sudo",
    "ping",
    "psql",
    "sqlite3",
    "ffmpeg",
    "jq",
    "zip",
    "gzip",
    "openssl",
    "dig",
];

/// Programs whose name is also an everyday English word ("make a new file",
/// "go to", "top of the list"): a command line only after a run verb, alone,
/// or followed by an option or `&&`.
const WORDLIKE: &[&str] = &["make", "go", "top", "free", "bundle", "gem", "ping", "node", "python", "helm", "bun"];

/// Words that say the next word is the means: "check with du", "convert it
/// to mp4 with ffmpeg", "using docker".
const MEANS: &[&str] = &["with", "using", "via"];

/// Words that open a question rather than an imperative.
const QUESTION: &[&str] = &[
    "are", "is", "do", "does", "did", "can", "could", "any", "anything", "what", "which", "how", "where", "who", "why",
    "there", "whats", "what's",
];

/// Verbs that say the next words are a command to run.
const RUN_LEAD: &[&str] = &["run", "execute", "exec", "type"];

/// Words that may stand before a command line's program: "run make",
/// "type npm install", "please execute ...".
const LEAD: &[&str] =
    &["run", "execute", "exec", "type", "do", "try", "please", "just", "can", "you", "now", "then", "a", "quick"];

/// Whether `token` is a command-line option: `-a`, `-rf`, `--oneline`,
/// `--no-verify` (not a bare dash, not a negative number).
fn is_flag(token: &str) -> bool {
    let body = token.strip_prefix("--").or_else(|| token.strip_prefix('-'));
    body.is_some_and(|b| {
        let mut chars = b.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && b.len() <= 24
            && b.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '=')
    })
}

/// The token without surrounding quotes, backticks and trailing punctuation.
fn bare(token: &str) -> &str {
    token.trim_matches(|c: char| "`'\"()[],;:!?".contains(c)).trim_end_matches('.')
}

/// Whether `token` ends a clause (`make, then ...`, `node -v?`).
fn ends_clause(token: &str) -> bool {
    token.trim_end_matches(['`', '\'', '"', ')']).ends_with([',', '.', '?', '!', ';', ':'])
}

/// The lowercase words of `tokens` (split at every non-alphanumeric char).
fn words_of(tokens: &[&str]) -> Vec<String> {
    tokens
        .iter()
        .flat_map(|t| t.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// From `start`, the tokens up to the end of the clause.
fn clause(tokens: &[&str], start: usize) -> Vec<String> {
    let end = tokens[start..].iter().position(|t| ends_clause(t)).map_or(tokens.len(), |p| start + p + 1);
    words_of(&tokens[start..end])
}

/// A command line in `query`, as the lowercase words it spans (a program
/// opening the request, with its arguments to the end of the clause; a
/// backticked program; or only the options and the word before them when
/// just the shape says so: an option after a word, `&&` or a pipe).
/// `None` when the request carries no command line.
pub(super) fn command_line(query: &str) -> Option<Vec<String>> {
    let tokens: Vec<&str> = query.split_whitespace().collect();
    let is_operator = |t: &str| t == "&&" || t == "|";
    let shaped_at = |i: usize| {
        bare(tokens[i - 1]).chars().any(char::is_alphanumeric) && (is_flag(bare(tokens[i])) || is_operator(tokens[i]))
    };
    let first_shaped = (1..tokens.len()).find(|&i| shaped_at(i));
    let lead = tokens.iter().position(|t| !LEAD.contains(&bare(t).to_ascii_lowercase().as_str()));
    if let Some(i) = lead {
        let t = bare(tokens[i]);
        let lower = t.to_ascii_lowercase();
        let after_run = tokens[..i].iter().any(|w| RUN_LEAD.contains(&bare(w).to_ascii_lowercase().as_str()));
        // an option, an operator or a path after the program: `node -v`,
        // `python app.py`; or after its subcommand: `go build ./...`
        let operand_at = |k: usize| {
            tokens.get(k).is_none_or(|n| {
                let n = bare(n);
                is_flag(n) || is_operator(n) || n.contains('/') || n.contains('.')
            })
        };
        let subcommand = tokens.get(i + 1).is_some_and(|s| bare(s).chars().all(|c| c.is_ascii_lowercase()))
            && tokens.get(i + 2).is_some_and(|_| operand_at(i + 2));
        let operand = operand_at(i + 1) || subcommand;
        let wordlike = WORDLIKE.contains(&lower.as_str());
        let program =
            PROGRAMS.contains(&lower.as_str()) && (after_run || operand || first_shaped.is_some() || !wordlike);
        if program || t.starts_with("./") {
            return Some(clause(&tokens, i));
        }
    }
    // a backticked command anywhere: "what does `uname -a` print"
    for (i, t) in tokens.iter().enumerate() {
        if let Some(inner) = t.strip_prefix('`')
            && PROGRAMS.contains(&bare(inner).to_ascii_lowercase().as_str())
        {
            let end = tokens[i..].iter().position(|x| x.ends_with('`')).map_or(i + 1, |p| i + p + 1);
            return Some(words_of(&tokens[i..end]));
        }
    }
    // a program named as the means of an imperative, ending its clause:
    // "check with du", "convert video.mov to mp4 with ffmpeg" (not a
    // question's topic: "are there tools for working with docker?")
    // where the clause holding token `i` opens, kept as `i` moves (a search
    // back from every token made a long request cost its length squared)
    let mut opens = 0;
    for i in 1..tokens.len() {
        if ends_clause(tokens[i - 1]) {
            opens = i;
        }
        let program = bare(tokens[i]).to_ascii_lowercase();
        let asks = QUESTION.contains(&bare(tokens[opens]).to_ascii_lowercase().as_str());
        if !asks
            && MEANS.contains(&bare(tokens[i - 1]).to_ascii_lowercase().as_str())
            && PROGRAMS.contains(&program.as_str())
            && !WORDLIKE.contains(&program.as_str())
            && (i + 1 == tokens.len() || ends_clause(tokens[i]))
        {
            return Some(vec![program]);
        }
    }
    first_shaped.map(|i| {
        let mut words = words_of(&tokens[i - 1..i]);
        words.extend(words_of(&tokens[i..].iter().copied().filter(|t| is_flag(bare(t))).collect::<Vec<_>>()));
        words
    })
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
