//! The parallel, descriptor-based walk behind `grep_files` and `file_search`.
//!
//! Every directory is opened relative to its parent's descriptor with
//! `O_NOFOLLOW | O_DIRECTORY` and listed through that descriptor; every file is
//! opened relative to its directory's descriptor with `O_NOFOLLOW | O_NONBLOCK`.
//! The walk's own root is opened beneath the workspace root with no symlink
//! allowed on its path ([`Workspace::open_walked`]). So a directory swapped for a
//! symlink mid-walk fails to open (`O_NOFOLLOW`) instead of being entered, no
//! path is ever resolved again from the top, and nothing outside the workspace
//! is listed or read. (As with any descriptor walk, a directory already opened
//! that someone moves out of the workspace is still finished; moving it needs
//! write access to both places, which reading it does not grant.)
//!
//! Filtering is ripgrep's default, with the `ignore` crate's matchers and the
//! precedence its own walker uses (`ignore::dir`, with `require_git(false)`):
//! glob overrides first; then the nearest `.ignore` match, else the nearest
//! `.gitignore` match, else `.git/info/exclude`, else the global excludes file;
//! then hidden names skipped unless a rule whitelisted them. Symlinks, FIFOs,
//! sockets and devices are never visited. Ignore files of the walk root's
//! ancestors apply too, as in ripgrep: those inside the workspace are read
//! beneath its root, those above it (the user's own configuration, never shown)
//! by path, like the global excludes file.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use quiver_engine::{ToolError, Workspace};

/// Files per work item: small enough to spread one large directory over every
/// thread, large enough that the queue's lock is not taken per file.
const FILES_PER_ITEM: usize = 16;
/// An ignore file larger than this is not read (a hostile one could be huge).
const MAX_IGNORE_FILE: u64 = 16 << 20;
/// `getdents` buffer per thread; ripgrep's (glibc's) is 32 KiB too.
const LIST_BUFFER: usize = 32 << 10;

/// A regular file the walk found, with the descriptor of the directory holding it.
pub(crate) struct WalkedFile<'a> {
    path: &'a Path,
    dir: BorrowedFd<'a>,
}

impl WalkedFile<'_> {
    /// Absolute path: the walk root joined with the names walked.
    pub(crate) fn path(&self) -> &Path {
        self.path
    }

    /// Opens the file for reading relative to its directory's descriptor.
    /// `O_NOFOLLOW | O_NONBLOCK`: a file swapped for a symlink is refused, one
    /// swapped for a FIFO is not waited on, and anything but a regular file is
    /// refused after the open.
    pub(crate) fn open(&self) -> io::Result<File> {
        let name = self.path.file_name().ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
        let file = File::from(rustix::fs::openat(self.dir, name, flags, Mode::empty())?);
        if !file.metadata()?.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        Ok(file)
    }
}

/// Walks `target` (absolute, inside the workspace) on every core, calling a
/// visitor for each regular file that passes the filters. `make_visitor` runs
/// once per thread, so a visitor keeps per-thread state and is dropped when its
/// thread runs out of work. Returns how many directories could not be opened or
/// listed. A file as `target` is visited whatever the filters say, as in ripgrep.
pub(crate) fn walk<F, V>(ws: &Workspace, target: &Path, glob: Option<&str>, make_visitor: F) -> Result<u64, ToolError>
where
    F: Fn() -> V + Sync,
    V: FnMut(&WalkedFile<'_>),
{
    let filter = Filter::new(ws.root(), glob)?;
    let cannot = |e: io::Error| ToolError::model(format!("cannot search `{}`: {e}", ws.display(target)));
    let fd = OwnedFd::from(ws.open_walked(target, true).map_err(cannot)?);
    let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd).map_err(|e| cannot(e.into()))?.st_mode);
    let first = match kind {
        FileType::Directory => Work::Root { fd, path: target.to_path_buf(), rules: ancestor_rules(ws, target) },
        FileType::RegularFile => {
            let parent = target.parent().ok_or_else(|| cannot(io::ErrorKind::InvalidInput.into()))?;
            let dir = OwnedFd::from(ws.open_walked(parent, true).map_err(cannot)?);
            let node = Arc::new(DirNode { fd: dir, rules: None });
            Work::Files { dir: node, paths: vec![target.to_path_buf()] }
        }
        _ => return Ok(0),
    };
    let queue = Queue::new(first);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(12);
    let worker = || {
        let mut visit = make_visitor();
        let mut worker =
            Worker { ws, filter: &filter, buf: Vec::with_capacity(LIST_BUFFER), found: Vec::new(), failed: 0 };
        while let Some(work) = queue.pop() {
            let _unwinding = Busy(&queue);
            worker.run(work, &mut visit);
            queue.done(&mut worker.found);
        }
        worker.failed
    };
    Ok(std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(worker)).collect();
        let mine = worker();
        // A helper's panic is re-raised here (`Busy` has stopped the others).
        mine + helpers.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).sum::<u64>()
    }))
}

/// An opened directory: its descriptor and the ignore rules in force for its
/// entries (its own ignore files' and every ancestor's).
struct DirNode {
    fd: OwnedFd,
    rules: Option<Arc<Rules>>,
}

enum Work {
    /// The walk root, already opened; `rules` are its ancestors'.
    Root { fd: OwnedFd, path: PathBuf, rules: Option<Arc<Rules>> },
    /// A subdirectory, opened relative to its parent when its turn comes (so
    /// queued directories hold no descriptor of their own).
    Dir { parent: Arc<DirNode>, path: PathBuf },
    /// Some files of one directory.
    Files { dir: Arc<DirNode>, paths: Vec<PathBuf> },
}

struct Worker<'a> {
    ws: &'a Workspace,
    filter: &'a Filter,
    /// The listing buffer, reused for every directory this thread lists.
    buf: Vec<u8>,
    /// Work found while running one item, queued when it is done.
    found: Vec<Work>,
    failed: u64,
}

impl Worker<'_> {
    fn run(&mut self, work: Work, visit: &mut impl FnMut(&WalkedFile<'_>)) {
        match work {
            Work::Root { fd, path, rules } => self.scan(fd, path, rules),
            Work::Dir { parent, path } => {
                let Some(name) = path.file_name() else { return };
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                match rustix::fs::openat(&parent.fd, name, flags, Mode::empty()) {
                    Ok(fd) => self.scan(fd, path, parent.rules.clone()),
                    // Gone, unreadable, or no longer a directory (swapped for a symlink).
                    Err(_) => self.failed += 1,
                }
            }
            Work::Files { dir, paths } => {
                for path in &paths {
                    visit(&WalkedFile { path, dir: dir.fd.as_fd() });
                }
            }
        }
    }

    /// Lists a directory, adds its ignore files to the inherited rules, and
    /// queues the entries that pass the filters.
    fn scan(&mut self, fd: OwnedFd, path: PathBuf, inherited: Option<Arc<Rules>>) {
        let mut entries: Vec<(PathBuf, FileType)> = Vec::new();
        let mut rule_files = RuleFiles::default();
        let listed = list(fd.as_fd(), &mut self.buf, |name, kind| {
            rule_files.note(name, kind);
            let mut entry = PathBuf::with_capacity(path.as_os_str().len() + 1 + name.len());
            entry.push(&path);
            entry.push(name);
            entries.push((entry, kind));
        });
        if listed.is_err() {
            self.failed += 1;
        }
        let rules = rule_files.load(self.ws, fd.as_fd(), &path, inherited);
        let node = Arc::new(DirNode { fd, rules });
        let mut files = Vec::new();
        for (path, mut kind) in entries {
            if kind == FileType::Unknown {
                // Some file systems leave the type out of listings.
                let Some(name) = path.file_name() else { continue };
                match rustix::fs::statat(&node.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => kind = FileType::from_raw_mode(st.st_mode),
                    Err(_) => continue,
                }
            }
            let is_dir = match kind {
                FileType::Directory => true,
                FileType::RegularFile => false,
                // Symlinks are not followed; FIFOs, sockets and devices are not searched.
                _ => continue,
            };
            if self.filter.skips(node.rules.as_deref(), &path, is_dir) {
                continue;
            }
            if is_dir {
                self.found.push(Work::Dir { parent: node.clone(), path });
            } else {
                files.push(path);
                if files.len() == FILES_PER_ITEM {
                    self.found.push(Work::Files { dir: node.clone(), paths: std::mem::take(&mut files) });
                }
            }
        }
        if !files.is_empty() {
            self.found.push(Work::Files { dir: node, paths: files });
        }
    }
}

/// Calls `each(name, type)` for every entry of the directory `fd` but `.` and `..`.
#[cfg(target_os = "linux")]
fn list(fd: BorrowedFd<'_>, buf: &mut Vec<u8>, mut each: impl FnMut(&OsStr, FileType)) -> io::Result<()> {
    let mut dir = rustix::fs::RawDir::new(fd, buf.spare_capacity_mut());
    while let Some(entry) = dir.next() {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name != "." && name != ".." {
            each(name, entry.file_type());
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn list(fd: BorrowedFd<'_>, _buf: &mut Vec<u8>, mut each: impl FnMut(&OsStr, FileType)) -> io::Result<()> {
    for entry in rustix::fs::Dir::read_from(fd)? {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name != "." && name != ".." {
            each(name, entry.file_type());
        }
    }
    Ok(())
}

/// The ignore files one directory listing showed.
#[derive(Default)]
struct RuleFiles {
    dot_ignore: Option<FileType>,
    git_ignore: Option<FileType>,
    git_dir: bool,
}

impl RuleFiles {
    fn note(&mut self, name: &OsStr, kind: FileType) {
        match name.as_bytes() {
            b".ignore" => self.dot_ignore = Some(kind),
            b".gitignore" => self.git_ignore = Some(kind),
            b".git" => self.git_dir = kind == FileType::Directory,
            _ => {}
        }
    }

    /// The rules for the entries of `dir`: `inherited` plus this directory's own.
    fn load(
        &self,
        ws: &Workspace,
        fd: BorrowedFd<'_>,
        dir: &Path,
        inherited: Option<Arc<Rules>>,
    ) -> Option<Arc<Rules>> {
        let read = |name: &str, kind: Option<FileType>| match kind? {
            FileType::RegularFile => read_regular(open_at(fd, name, false).ok()?),
            // `ignore` follows a symlinked ignore file; here only to a file inside the workspace.
            FileType::Symlink => read_regular(ws.open_read(&dir.join(name)).ok()?),
            _ => None,
        };
        let exclude = || {
            let git = open_at(fd, ".git", true).ok()?;
            let info = open_at(git.as_fd(), "info", true).ok()?;
            read_regular(open_at(info.as_fd(), "exclude", false).ok()?)
        };
        let dot_ignore = read(".ignore", self.dot_ignore);
        let git_ignore = read(".gitignore", self.git_ignore);
        let git_exclude = if self.git_dir { exclude() } else { None };
        Rules::add(dir, [dot_ignore, git_ignore, git_exclude], inherited)
    }
}

/// `openat` without following a symlink, without blocking on a FIFO.
fn open_at(dir: BorrowedFd<'_>, name: &str, directory: bool) -> io::Result<File> {
    let kind = if directory { OFlags::DIRECTORY } else { OFlags::NONBLOCK | OFlags::NOCTTY };
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | kind;
    Ok(File::from(rustix::fs::openat(dir, name, flags, Mode::empty())?))
}

/// The contents of an opened regular file of at most [`MAX_IGNORE_FILE`] bytes.
fn read_regular(file: File) -> Option<Vec<u8>> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_IGNORE_FILE {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_IGNORE_FILE).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The ignore rules of one directory that has any, linked to the nearest
/// ancestor directory that has any.
struct Rules {
    dot_ignore: Gitignore,
    git_ignore: Gitignore,
    git_exclude: Gitignore,
    parent: Option<Arc<Rules>>,
}

impl Rules {
    /// `parent` with `dir`'s rules (`.ignore`, `.gitignore`, `.git/info/exclude`
    /// contents) on top; just `parent` when they add nothing.
    fn add(dir: &Path, files: [Option<Vec<u8>>; 3], parent: Option<Arc<Rules>>) -> Option<Arc<Rules>> {
        if files.iter().all(Option::is_none) {
            return parent;
        }
        let [dot_ignore, git_ignore, git_exclude] =
            files.map(|bytes| bytes.map_or_else(Gitignore::empty, |b| matcher(dir, &b)));
        if dot_ignore.is_empty() && git_ignore.is_empty() && git_exclude.is_empty() {
            return parent;
        }
        Some(Arc::new(Rules { dot_ignore, git_ignore, git_exclude, parent }))
    }
}

/// A gitignore matcher rooted at `dir`, read as `GitignoreBuilder::add` reads a
/// file: line by line, a leading BOM dropped, stopping at invalid UTF-8, bad
/// globs skipped.
fn matcher(dir: &Path, bytes: &[u8]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else { break };
        let line = if i == 0 { line.trim_start_matches('\u{feff}') } else { line };
        let _ = builder.add_line(None, line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The rules from the ignore files of `target`'s ancestors, outermost first,
/// as `ignore` adds them for a walk root. Inside the workspace they are read
/// beneath its root; above it by path, non-blocking, regular files only.
fn ancestor_rules(ws: &Workspace, target: &Path) -> Option<Arc<Rules>> {
    let ancestors: Vec<&Path> = target.ancestors().skip(1).collect();
    let mut rules = None;
    for dir in ancestors.into_iter().rev() {
        let read = |name: &str| {
            let path = dir.join(name);
            let file = if dir.starts_with(ws.root()) {
                ws.open_read(&path).ok()?
            } else {
                use std::os::unix::fs::OpenOptionsExt;
                let nonblock = OFlags::NONBLOCK.bits() as i32;
                std::fs::OpenOptions::new().read(true).custom_flags(nonblock).open(&path).ok()?
            };
            read_regular(file)
        };
        rules = Rules::add(dir, [read(".ignore"), read(".gitignore"), read(".git/info/exclude")], rules);
    }
    rules
}

/// What ripgrep filters by default, beyond what each directory's rules say.
struct Filter {
    overrides: Override,
    global: Gitignore,
    /// Credentials and quiver's own state beneath the workspace (one at `~`):
    /// never walked into, whatever a glob or an ignore file whitelists.
    secret: Vec<PathBuf>,
}

impl Filter {
    fn new(root: &Path, glob: Option<&str>) -> Result<Self, ToolError> {
        let overrides = match glob {
            Some(glob) => {
                let bad = |e: ignore::Error| ToolError::model(format!("invalid glob `{glob}`: {e}"));
                let mut builder = OverrideBuilder::new(root);
                builder.add(glob).map_err(bad)?;
                builder.build().map_err(bad)?
            }
            None => Override::empty(),
        };
        let secret = quiver_sandbox::protected::secret_paths(root);
        Ok(Filter { overrides, global: Gitignore::global().0, secret })
    }

    /// Whether an entry is left out, with `ignore`'s precedence: an override
    /// match decides; else the nearest `.ignore` match, else the nearest
    /// `.gitignore`, else `.git/info/exclude`, else the global excludes; with
    /// no match at all, a hidden name is left out.
    fn skips(&self, rules: Option<&Rules>, path: &Path, is_dir: bool) -> bool {
        if self.secret.iter().any(|s| path.starts_with(s)) {
            return true;
        }
        if !self.overrides.is_empty() {
            let m = self.overrides.matched(path, is_dir);
            if !m.is_none() {
                return m.is_ignore();
            }
        }
        let (mut dot_ignore, mut git_ignore, mut git_exclude) = (Match::None, Match::None, Match::None);
        let mut node = rules;
        while let Some(rules) = node {
            dot_ignore = rules.dot_ignore.matched(path, is_dir);
            if !dot_ignore.is_none() {
                break; // Nothing outranks it.
            }
            if git_ignore.is_none() {
                git_ignore = rules.git_ignore.matched(path, is_dir);
            }
            if git_exclude.is_none() {
                git_exclude = rules.git_exclude.matched(path, is_dir);
            }
            node = rules.parent.as_deref();
        }
        let mut m = dot_ignore.or(git_ignore).or(git_exclude);
        if m.is_none() {
            m = self.global.matched(path, is_dir);
        }
        m.is_ignore() || (m.is_none() && path.file_name().is_some_and(|n| n.as_bytes().starts_with(b".")))
    }
}

/// The shared stack of work; LIFO, so the walk goes depth first and few
/// directory descriptors are open at once.
struct Queue {
    state: Mutex<QueueState>,
    wake: Condvar,
}

struct QueueState {
    work: Vec<Work>,
    /// Items taken and not yet done: they may still add work.
    busy: usize,
    /// A worker panicked: everyone stops.
    stop: bool,
}

impl Queue {
    fn new(first: Work) -> Self {
        Queue { state: Mutex::new(QueueState { work: vec![first], busy: 0, stop: false }), wake: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock()
    }

    /// The next item, waiting while others may still add some; `None` when
    /// the walk is over.
    fn pop(&self) -> Option<Work> {
        let mut state = self.lock();
        loop {
            if state.stop {
                return None;
            }
            if let Some(work) = state.work.pop() {
                state.busy += 1;
                return Some(work);
            }
            if state.busy == 0 {
                return None;
            }
            self.wake.wait(&mut state);
        }
    }

    /// Ends one item, queueing what it found.
    fn done(&self, found: &mut Vec<Work>) {
        let mut state = self.lock();
        state.busy -= 1;
        let added = found.len();
        state.work.append(found);
        let over = state.busy == 0 && state.work.is_empty();
        drop(state);
        if over || added > 1 {
            self.wake.notify_all();
        } else if added == 1 {
            self.wake.notify_one();
        }
    }
}

/// Held while a worker runs an item; if the visitor panics, the other workers
/// stop instead of waiting forever for the item to finish.
struct Busy<'a>(&'a Queue);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().stop = true;
            self.0.wake.notify_all();
        }
    }
}
