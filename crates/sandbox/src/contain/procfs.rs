//! Reading the process table from `/proc`, for the subreaper fallback and the
//! stale-job sweep.

use std::collections::HashMap;
use std::path::Path;

/// One process as `/proc/PID/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Proc {
    pub ppid: i32,
    pub zombie: bool,
    /// Start time in clock ticks since boot: tells a process from a later one
    /// that reused its pid.
    pub start: u64,
}

/// Parses a `stat` line: `pid (comm) state ppid ... starttime ...`. The command
/// name may hold spaces and parentheses, so fields are counted after the last `)`.
pub(crate) fn parse_stat(line: &str) -> Option<Proc> {
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (0), ppid (1), ... starttime is field 22 of the
    // whole line, i.e. index 19 here.
    let state = fields.first()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some(Proc { ppid, zombie: *state == "Z" || *state == "X", start })
}

pub(crate) fn stat(pid: i32) -> Option<Proc> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process visible in `/proc`.
pub(crate) fn table() -> HashMap<i32, Proc> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if let Some(p) = stat(pid) {
            out.insert(pid, p);
        }
    }
    out
}

/// Whether `ancestor` is `pid` or one of its ancestors in `table`.
pub(crate) fn descends_from(table: &HashMap<i32, Proc>, mut pid: i32, ancestor: i32) -> bool {
    // Bounded: a table read while processes come and go could hold a cycle.
    for _ in 0..4096 {
        if pid == ancestor {
            return true;
        }
        match table.get(&pid) {
            Some(p) if p.ppid > 0 && p.ppid != pid => pid = p.ppid,
            _ => return false,
        }
    }
    false
}

/// The value of `name` in the environment `pid` was started with.
pub(crate) fn environ_var(pid: i32, name: &str) -> Option<String> {
    match environ_lookup(pid, name) {
        Environ::Set(value) => Some(value),
        Environ::Unset | Environ::Unreadable => None,
    }
}

/// What a process's environment says of one variable.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Environ {
    Set(String),
    Unset,
    /// Nothing could be read: the process is gone, or in the middle of an
    /// `execve` (between the new memory map and its environment being laid
    /// out, the kernel shows an empty environment), or it cleared its
    /// environment (`env -i`). Only a later look can tell.
    Unreadable,
}

pub(crate) fn environ_lookup(pid: i32, name: &str) -> Environ {
    let raw = match std::fs::read(Path::new("/proc").join(pid.to_string()).join("environ")) {
        Ok(raw) if !raw.is_empty() => raw,
        _ => return Environ::Unreadable,
    };
    let prefix = format!("{name}=");
    raw.split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
        .map_or(Environ::Unset, |v| Environ::Set(String::from_utf8_lossy(v).into_owned()))
}

/// The start time of this process (part of every marker and cgroup name).
pub(crate) fn self_start() -> u64 {
    stat(std::process::id() as i32).map_or(0, |p| p.start)
}

/// Whether the process `pid` that started at `start` still runs.
pub(crate) fn alive(pid: i32, start: u64) -> bool {
    stat(pid).is_some_and(|p| p.start == start && !p.zombie)
}
