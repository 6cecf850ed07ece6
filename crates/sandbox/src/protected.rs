//! The one list of paths a sandboxed command and the file tools may not
//! change, and the home directory's secrets a sandboxed command may not read.
//!
//! The rule for the workspace list: a path is on it when writing it plants
//! code that runs *later, unasked*, the next time the user does something
//! ordinary there — `git status` runs `core.fsmonitor` from `.git/config`,
//! `git checkout` runs `.git/hooks/post-checkout`, `cd` runs direnv's
//! `.envrc`, opening the folder runs an editor's tasks — or changes what
//! quiver itself trusts (`.quiver/`, `quiver.toml`, `.mcp.json`). Project
//! code the user runs on purpose (`Makefile`, `build.rs`, `package.json`
//! scripts) is the workspace's own business and stays writable.
//!
//! The namespace sandbox binds these read-only on top of the workspace; the
//! Landlock fallback splits the workspace around them; `write_file`,
//! `edit_file`, `apply_patch` and `fim_edit` refuse them (or ask). A path
//! that does not exist when a command starts cannot be bound (except the
//! directories git itself keeps under an existing `.git`, which are created
//! empty first); see `docs/architecture.md` for what that leaves.

use std::path::{Component, Path, PathBuf};

/// Workspace-relative paths kept read-only, with why.
pub const WORKSPACE_PROTECTED: &[(&str, &str)] = &[
    (".git/config", "git runs commands it names (core.fsmonitor, core.pager, filters) on the user's next git command"),
    (".git/hooks", "git runs its hooks on the user's next commit or checkout"),
    (".git/info", "git reads attributes and excludes from it that select filters and drivers"),
    (".git/modules", "submodules' git directories carry their own config and hooks"),
    (".git/worktrees", "linked worktrees' git directories name their own config and common directory"),
    (".git/commondir", "it points git at another directory's config and hooks"),
    (".git/config.worktree", "git reads it as config (core.fsmonitor, hooks) where worktree config is on"),
    (".git/objects/info/alternates", "it points git at another repository's objects"),
    (".quiver", "quiver's project settings and manifest"),
    ("quiver.toml", "quiver's project config"),
    (".mcp.json", "MCP servers the project defines"),
    (".envrc", "direnv runs it when the user enters the directory"),
    (".vscode", "an editor runs tasks and tools it names when the folder is opened"),
];

/// Entries of `$HOME` that shells, git, editors and toolchains read at
/// start-up: with the workspace containing the home, one that does not
/// exist yet is held by a stand-in while a command runs (an existing one is
/// hidden by the sandbox), so the command cannot plant it. A `.cargo` or
/// `.config` directory made by a command could carry a `rustc-wrapper` or an
/// autostart entry just as well as a `.profile` a login.
pub const HOME_STARTUP: &[(&str, StandIn)] = &[
    (".profile", StandIn::Empty),
    (".bash_profile", StandIn::Empty),
    (".bash_login", StandIn::Empty),
    (".bashrc", StandIn::Empty),
    (".bash_logout", StandIn::Empty),
    (".zshenv", StandIn::Empty),
    (".zprofile", StandIn::Empty),
    (".zshrc", StandIn::Empty),
    (".zlogin", StandIn::Empty),
    (".pam_environment", StandIn::Empty),
    (".xprofile", StandIn::Empty),
    (".xsessionrc", StandIn::Empty),
    (".gitconfig", StandIn::Empty),
    (".inputrc", StandIn::Empty),
    (".npmrc", StandIn::Empty),
    (".pypirc", StandIn::Empty),
    (".netrc", StandIn::Empty),
    (".curlrc", StandIn::Empty),
    (".vimrc", StandIn::Empty),
    (".exrc", StandIn::Empty),
    (".tmux.conf", StandIn::Empty),
    (".ssh", StandIn::Dir),
    (".config", StandIn::Dir),
    (".local", StandIn::Dir),
    (".cargo", StandIn::Dir),
    (".gnupg", StandIn::Dir),
    (".docker", StandIn::Dir),
    (".kube", StandIn::Dir),
    (".aws", StandIn::Dir),
];

/// What stands in for a protected path that does not exist yet (see the
/// sandbox's stand-ins): inert for git, shells and editors alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandIn {
    Dir,
    Empty,
    /// `.`: an empty `commondir` makes every git command fail.
    CommonDirSelf,
}

impl StandIn {
    /// The stand-in for a workspace-relative protected path. Outside `.git`
    /// every one is an empty directory, even for a file's name: git shows
    /// no empty directory, so neither the user's `git status` nor a `git
    /// add -A` sees a stand-in while a command runs (a program that reads
    /// `.mcp.json` meanwhile gets "is a directory" instead of nothing).
    pub fn for_protected(rel: &str) -> StandIn {
        match rel {
            ".git/commondir" => StandIn::CommonDirSelf,
            ".git/hooks" | ".git/info" | ".git/modules" | ".git/worktrees" => StandIn::Dir,
            _ if rel.starts_with(".git/") => StandIn::Empty,
            _ => StandIn::Dir,
        }
    }
}

/// Directories under `$HOME` whose contents a sandboxed command may not read
/// (credentials), relative to the home directory.
pub const HOME_SECRET_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".local/share/keyrings",
];

/// Files under `$HOME` a sandboxed command may not read.
pub const HOME_SECRET_FILES: &[&str] = &[
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pgpass",
    ".my.cnf",
    ".config/git/credentials",
];

/// What a sandboxed command still sees of the real home (read-only, those
/// that exist): toolchains and the package caches a build reads. Everything
/// else of `$HOME` is hidden, whatever it is called: an allowlist, so the
/// next tool's token file nobody listed is closed by default. The user adds
/// entries under `[sandbox] home_allow` in their own config
/// ([`user_home_allow`](crate::user_home_allow)). Credentials inside an
/// allowed entry (`~/.cargo/credentials.toml`) stay masked
/// ([`HOME_SECRET_FILES`]).
pub const HOME_TOOLCHAIN_ALLOW: &[&str] = &[
    ".cargo",
    ".rustup",
    ".local/bin",
    ".local/lib",
    ".local/share/uv",
    ".local/share/pnpm",
    ".local/share/mise",
    ".pyenv",
    ".rbenv",
    ".nvm",
    ".npm",
    ".node-gyp",
    ".bun",
    ".deno",
    ".volta",
    ".asdf",
    ".sdkman",
    ".elan",
    ".ghcup",
    ".opam",
    "go",
    ".cache/go-build",
    ".cache/pip",
    ".cache/uv",
    ".cache/pypoetry",
    ".cache/node-gyp",
    ".cache/ms-playwright",
];

/// Directories under `$HOME` left writable when the workspace contains the
/// home directory; every other dot entry of `$HOME` is kept read-only then
/// (shell start-up files, `.gitconfig`, `.local/bin`, autostart entries run
/// code at the user's next login, shell or git command).
pub const HOME_WRITABLE_DOT_DIRS: &[&str] = &[".cache"];

/// Why `target` (absolute, inside `root`) may not be written, if it may not.
/// Component-wise: `.git/hooks/x` is protected, `.git/hooksx` is not. Also
/// covers a `.git` *file* (a worktree's pointer to its git directory).
pub fn protected_reason(root: &Path, target: &Path) -> Option<String> {
    let rel = target.strip_prefix(root).ok()?;
    let rel = normal(rel);
    // Compared case-insensitively: on a case-insensitive file system (macOS,
    // Windows, an ext4 `casefold` directory) `.GIT/hooks/x` *is* `.git/hooks/x`.
    let folded = PathBuf::from(rel.to_string_lossy().to_ascii_lowercase());
    for (path, why) in WORKSPACE_PROTECTED {
        if folded.starts_with(path) {
            return Some(format!("`{path}` is protected: {why}"));
        }
    }
    if folded.starts_with(".git") && root.join(".git").is_file() {
        return Some("`.git` is a pointer to the repository's git directory: rewriting it redirects git".into());
    }
    if let Some(why) = nested_git_reason(&folded) {
        return Some(why);
    }
    // The repositories whose working trees hold the target (its ancestors
    // with a `.git` directory or gitfile, up to the root): a file tool's write checks
    // these, not a walk of the whole workspace.
    let target_n = normal(target);
    let root_n = normal(root);
    let repos: Vec<(PathBuf, PathBuf)> = target_n
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(&root_n))
        .filter_map(|a| {
            let dot_git = a.join(".git");
            let git_dir = if dot_git.is_dir() { Some(dot_git) } else { crate::gitpaths::gitfile_target(&dot_git) };
            git_dir.map(|g| (g, a.to_path_buf()))
        })
        .collect();
    for (git_dir, worktree) in repos {
        if let Some((named, _)) = crate::gitpaths::config_named(&git_dir, &worktree, &root_n)
            .into_iter()
            .find(|(p, _)| target_n.starts_with(p))
        {
            return Some(format!(
                "`{}` is named by the config of the repository at `{}` (a hooks directory, an include or a command): git reads or runs it on the user's next git command",
                named.strip_prefix(root).unwrap_or(&named).display(),
                worktree.display()
            ));
        }
    }
    // The home's own files count only when the workspace contains the home
    // (a workspace at `~` or above), as in the sandbox.
    if let Some(home) = home_dir().map(|h| normal(&h)).filter(|h| h.starts_with(normal(root)))
        && let Ok(in_home) = normal(target).strip_prefix(&home)
    {
        let first = in_home.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned());
        if HOME_SECRET_DIRS.iter().chain(HOME_SECRET_FILES).any(|p| in_home.starts_with(p)) {
            return Some(format!("`~/{}` holds credentials", in_home.display()));
        }
        // The home's own repository, when the workspace is the home: its
        // dangerous parts are in WORKSPACE_PROTECTED, the rest is git's work.
        let own_git = first.as_deref() == Some(".git") && home == normal(root);
        if let Some(first) = first
            && first.starts_with('.')
            && !HOME_WRITABLE_DOT_DIRS.contains(&first.as_str())
            && !own_git
        {
            return Some(format!(
                "`~/{first}` is a file of your home that shells, git or your session read at start-up"
            ));
        }
    }
    None
}

/// A `.git` anywhere below the root is a repository of its own, and the
/// user's `git status` at the root runs the `core.fsmonitor` of one it
/// tracks as a submodule (git recurses into it), so its git paths are the
/// root's. A file named `.git` points git at another git directory, whose
/// config is then an ordinary file anywhere: writing one is refused too.
fn nested_git_reason(rel: &Path) -> Option<String> {
    let parts: Vec<Component<'_>> = rel.components().collect();
    let at = parts.iter().position(|c| c.as_os_str() == ".git")?;
    let inner: PathBuf = parts[at..].iter().collect();
    if at + 1 == parts.len() {
        return Some(format!(
            "`{}` would point git at another git directory, whose config git then runs commands from",
            rel.display()
        ));
    }
    if at == 0 {
        return None;
    }
    WORKSPACE_PROTECTED.iter().filter(|(path, _)| path.starts_with(".git/")).find_map(|(path, why)| {
        inner.starts_with(path).then(|| format!("`{}` is a nested repository's `{path}`: {why}", rel.display()))
    })
}

/// The credentials and quiver's own config and state that lie beneath
/// `root` (absolute): what the sandbox masks for commands, which the file
/// tools must not read either when the workspace contains the home (a
/// workspace at `~` or `/`). One the workspace itself lies in (the user
/// opened `~/.ssh`) is the user's choice, as in the sandbox.
pub fn secret_paths(root: &Path) -> Vec<PathBuf> {
    let root = normal(root);
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(home) = home_dir() {
        candidates.extend(HOME_SECRET_DIRS.iter().chain(HOME_SECRET_FILES).map(|p| home.join(p)));
        // With the home inside the workspace, what the sandbox hides of it
        // (every dot entry but the allowlist) no file tool reads either.
        let home_n = normal(&home);
        if home_n.starts_with(&root) {
            let extra = crate::policy::user_config_file()
                .and_then(|f| crate::policy::user_home_allow(&f).ok())
                .unwrap_or_default();
            let allowed = home_allowed(&home_n, &extra);
            candidates.extend(home_hidden(&home_n, &allowed, home_n == root));
        }
    }
    candidates.extend(crate::policy::quiver_config_dir());
    candidates.extend(crate::policy::quiver_state_dir());
    candidates.into_iter().map(|p| normal(&p)).filter(|p| p.starts_with(&root) && !root.starts_with(p)).collect()
}

/// Why `target` (absolute, inside `root`) may not be read by a file tool, if
/// it may not: it is (or is inside) one of [`secret_paths`].
pub fn secret_reason(root: &Path, target: &Path) -> Option<String> {
    let target = normal(target);
    secret_paths(root).into_iter().find(|s| target.starts_with(s)).map(|s| {
        format!(
            "`{}` holds credentials or your home's configuration, or quiver's own config and state, which no tool reads unasked",
            s.display()
        )
    })
}

/// Every protected path that exists beneath `root` (absolute): the
/// protected list, a `.git` that is a file, the same git paths of every
/// repository nested in the workspace and every gitfile there, and what a
/// repository's config names inside the workspace (a `core.hooksPath`
/// directory, an included file, a script it runs). Outermost only: a path
/// inside another of the list is covered by it.
pub fn existing_protected(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        WORKSPACE_PROTECTED.iter().map(|(p, _)| root.join(p)).filter(|p| p.symlink_metadata().is_ok()).collect();
    let dot_git = root.join(".git");
    if dot_git.is_file() {
        out.push(dot_git.clone());
    }
    let nested = crate::gitpaths::nested(root);
    for (git_dir, worktree) in git_dirs(root, &nested) {
        out.extend(
            git_dir_protected()
                .map(|rel| git_dir.join(rel))
                .filter(|p| p.symlink_metadata().is_ok() && !p.starts_with(&dot_git)),
        );
        out.extend(crate::gitpaths::config_named(&git_dir, &worktree, root).into_iter().map(|(p, _)| p));
    }
    out.extend(nested.gitfiles);
    out.retain(|p| p.symlink_metadata().is_ok());
    outermost(out)
}

/// Protected paths beneath `root` that do not exist yet, each with what
/// stands in for it while a command runs (where its parent exists): the
/// protected list (its `.git/` entries only in a repository), the same git
/// paths of nested repositories, a hooks directory or include the config
/// names, and with `home` inside the workspace its start-up files.
pub fn absent_protected(root: &Path, home: Option<&Path>) -> Vec<(PathBuf, StandIn)> {
    let mut out: Vec<(PathBuf, StandIn)> = Vec::new();
    let in_repo = root.join(".git").is_dir();
    for (rel, _) in WORKSPACE_PROTECTED {
        if rel.starts_with(".git/") && !in_repo {
            continue;
        }
        out.push((root.join(rel), StandIn::for_protected(rel)));
    }
    let nested = crate::gitpaths::nested(root);
    let git_dirs = git_dirs(root, &nested);
    for (git_dir, _) in git_dirs.iter().filter(|(g, _)| *g != root.join(".git")) {
        for rel in git_dir_protected() {
            out.push((git_dir.join(rel), StandIn::for_protected(&format!(".git/{rel}"))));
        }
    }
    for (git_dir, worktree) in &git_dirs {
        for (path, is_dir) in crate::gitpaths::config_named(git_dir, worktree, root) {
            out.push((path, if is_dir { StandIn::Dir } else { StandIn::Empty }));
        }
    }
    if let Some(home) = home.map(normal).filter(|h| h.starts_with(normal(root))) {
        out.extend(HOME_STARTUP.iter().map(|(rel, kind)| (home.join(rel), *kind)));
    }
    out.retain(|(p, _)| p.symlink_metadata().is_err() && p.parent().is_some_and(Path::is_dir));
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// The `.git/`-relative entries of [`WORKSPACE_PROTECTED`].
fn git_dir_protected() -> impl Iterator<Item = &'static str> {
    WORKSPACE_PROTECTED.iter().filter_map(|(p, _)| p.strip_prefix(".git/"))
}

/// The git directories of the workspace with their working trees: its own
/// `.git` (when a directory) and every nested repository's or gitfile's.
fn git_dirs(root: &Path, nested: &crate::gitpaths::Nested) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    if root.join(".git").is_dir() {
        out.push((root.join(".git"), root.to_path_buf()));
    }
    for git_dir in nested.git_dirs.iter().cloned() {
        let worktree = git_dir.parent().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf());
        out.push((git_dir, worktree));
    }
    out
}

/// `paths` without those inside another of them, sorted.
fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

/// The entries of `home` (normalized) a sandboxed command still sees: the
/// toolchain allowlist and `extra` (relative to the home) that exist, where
/// they lie inside the home.
pub fn home_allowed(home: &Path, extra: &[String]) -> Vec<PathBuf> {
    let mut allowed: Vec<PathBuf> = HOME_TOOLCHAIN_ALLOW
        .iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .map(|rel| home.join(rel))
        .filter(|p| p.symlink_metadata().is_ok())
        .filter_map(|p| std::fs::canonicalize(&p).ok())
        // A link out of the home (`~/.cargo -> /opt/cargo`) is visible
        // where it points anyway.
        .filter(|p| p.starts_with(home) && p != home)
        .collect();
    allowed.sort();
    allowed.dedup();
    allowed
}

/// With the home inside the workspace, what of it is hidden: every dot
/// entry but `.cache`, the allowed ones (and the way to them) and, when the
/// home is the workspace (`own_git`), its `.git`.
pub fn home_hidden(home: &Path, allowed: &[PathBuf], own_git: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    hide_beside(home, allowed, true, own_git, &mut out);
    out
}

/// The entries of `dir` to hide so that only the allowed paths remain: an
/// entry on the way to an allowed path is descended into, not hidden. At
/// the top only dot entries count (the others are the work).
fn hide_beside(dir: &Path, allowed: &[PathBuf], top: bool, own_git: bool, out: &mut Vec<PathBuf>) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        if top
            && (name.as_bytes().first() != Some(&b'.')
                || HOME_WRITABLE_DOT_DIRS.iter().any(|w| std::ffi::OsStr::new(w) == name)
                || (own_git && name == ".git"))
        {
            continue;
        }
        let path = dir.join(&name);
        if allowed.iter().any(|a| path.starts_with(a)) {
            continue;
        }
        let on_the_way = allowed.iter().any(|a| a.starts_with(&path));
        if on_the_way && path.is_dir() && !path.is_symlink() {
            hide_beside(&path, allowed, false, own_git, out);
        } else {
            out.push(path);
        }
    }
}

/// `$HOME`, when set and absolute.
pub fn home_dir() -> Option<PathBuf> {
    crate::policy::home_dir()
}

/// `path` without `.` components and with `..` applied lexically (the file
/// tools have already refused `..` above the root).
pub(crate) fn normal(path: &Path) -> PathBuf {
    crate::gitpaths::lexical(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "protected_tests.rs"]
mod tests;
