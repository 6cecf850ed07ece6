//! Starting a command so that it can always be stopped, with everything it starts.
//!
//! Each command runs under `bash -c` (or `sh -c`) as the leader of a new session,
//! hence of a new process group: killing the group reaches every process the
//! command forked (unless one deliberately leaves it, like a daemon), and having no
//! controlling terminal makes prompts for passwords fail at once instead of
//! stopping the job or writing to the user's terminal. The parent-death signal
//! kills the leader if quiver itself dies without running any cleanup.
//!
//! Output: stdout and stderr share one pipe, so their lines keep the order the
//! command wrote them in. With `tty`, the command gets a pseudo-terminal instead
//! (for REPLs and other programs that behave differently without one).

use std::fs::File;
use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use nix::fcntl::OFlag;
use nix::pty::{grantpt, posix_openpt, ptsname_r, unlockpt};
use process_wrap::tokio::{ChildWrapper, CommandWrap, CommandWrapper, KillOnDrop, ProcessSession};

/// What the command's stdin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Foreground runs: reading stdin gets end-of-file instead of hanging.
    Null,
    /// Background tasks: `exec_shell_interact` writes here.
    Pipe,
    /// A pseudo-terminal for stdin, stdout and stderr.
    Tty,
}

pub struct Spawned {
    pub child: Box<dyn ChildWrapper>,
    /// The containment job and sandbox: finds what left the session (`setsid`).
    pub running: crate::process::Running,
    /// Leader pid, which is also the process group id.
    pub pid: i32,
    pub output: Box<dyn Read + Send>,
    pub stdin: Option<Box<dyn Write + Send>>,
}

/// Terminal size given to `tty` commands: wide, so tools do not wrap lines early.
const TTY_COLS: u16 = 200;
const TTY_ROWS: u16 = 50;

/// Starts `command` under `launch` (the sandbox and containment the gate's
/// verdict calls for, see `crate::process`).
pub fn spawn(command: &str, cwd: &Path, input: Input, launch: crate::process::Launch) -> io::Result<Spawned> {
    let shell = if crate::util::which("bash").is_some() { "bash" } else { "sh" };
    let mut cmd = tokio::process::Command::new(shell);
    cmd.arg("-c").arg(command).current_dir(cwd);
    // A pager would wait for a key press that never comes.
    cmd.env("PAGER", "cat").env("GIT_PAGER", "cat").env("GIT_TERMINAL_PROMPT", "0");

    let (output, stdin): (Box<dyn Read + Send>, Option<Box<dyn Write + Send>>) = match input {
        Input::Null | Input::Pipe => {
            let (out_r, out_w): (PipeReader, PipeWriter) = io::pipe()?;
            cmd.stdout(Stdio::from(out_w.try_clone()?)).stderr(Stdio::from(out_w));
            let stdin: Option<Box<dyn Write + Send>> = if input == Input::Pipe {
                let (in_r, in_w) = io::pipe()?;
                cmd.stdin(Stdio::from(in_r));
                Some(Box::new(in_w))
            } else {
                cmd.stdin(Stdio::null());
                None
            };
            (Box::new(out_r), stdin)
        }
        Input::Tty => {
            // O_CLOEXEC at creation: a command spawned meanwhile on another thread
            // must not inherit either end, or this terminal would never see EOF.
            let master = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC)?;
            grantpt(&master)?;
            unlockpt(&master)?;
            let slave_path = ptsname_r(&master)?;
            let slave = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(OFlag::O_NOCTTY.bits())
                .open(&slave_path)?;
            cmd.stdin(Stdio::from(slave.try_clone()?))
                .stdout(Stdio::from(slave.try_clone()?))
                .stderr(Stdio::from(slave));
            cmd.env("TERM", "dumb");
            let reader = File::from(master.as_fd().try_clone_to_owned()?);
            let writer = File::from(master.as_fd().try_clone_to_owned()?);
            (Box::new(reader), Some(Box::new(writer)))
        }
    };

    // After the command's own variables (kept by the scrub) and before
    // process_wrap's hooks: the child is confined before it does anything else.
    let running = Arc::new(launch.prepare_unconfined(&mut cmd)?);
    let mut wrapped = CommandWrap::from(cmd);
    // Order matters: `ProcessSession`'s setsid must run before `ChildSetup`
    // claims the terminal, and the sandbox comes last (inside the namespace
    // sandbox the command is a grandchild that inherits session and terminal).
    wrapped
        .wrap(ProcessSession)
        .wrap(KillOnDrop)
        .wrap(ChildSetup { parent: std::process::id(), tty: input == Input::Tty })
        .wrap(Confine(running.clone()));
    let child = wrapped.spawn()?;
    // The command (and with it our copies of the child's ends of the pipes or of
    // the terminal) must be gone, or reading the output would never reach EOF.
    drop(wrapped);
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| io::Error::other("the shell exited before it got a pid"))?;
    // The wrapper's copy went with `wrapped`.
    let running = Arc::try_unwrap(running).map_err(|_| io::Error::other("the sandbox hook outlived the spawn"))?;
    running.started(u32::try_from(pid).ok());
    Ok(Spawned { child, running, pid, output, stdin })
}

/// Registers the sandbox when the command spawns, after the other wrappers' hooks.
struct Confine(Arc<crate::process::Running>);

impl std::fmt::Debug for Confine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Confine")
    }
}

impl CommandWrapper for Confine {
    fn pre_spawn(&mut self, command: &mut tokio::process::Command, _core: &CommandWrap) -> io::Result<()> {
        self.0.confine(command)
    }
}

/// Runs in the child between fork and exec: claims the terminal in `tty` mode and
/// sets the parent-death signal.
#[derive(Debug)]
struct ChildSetup {
    parent: u32,
    tty: bool,
}

impl CommandWrapper for ChildSetup {
    fn pre_spawn(&mut self, command: &mut tokio::process::Command, _core: &CommandWrap) -> io::Result<()> {
        let parent = i32::try_from(self.parent).unwrap_or(i32::MAX);
        let tty = self.tty;
        let size = nix::libc::winsize { ws_row: TTY_ROWS, ws_col: TTY_COLS, ws_xpixel: 0, ws_ypixel: 0 };
        let hook = move || -> io::Result<()> {
            if tty {
                claim_terminal(&size)?;
            }
            die_with_parent(parent)
        };
        set_pre_exec(command, hook);
        Ok(())
    }
}

/// Makes the command's process die with quiver (SIGKILL on the parent's death),
/// for commands spawned outside the shell jobs (`run_tests`).
pub fn arm_parent_death(command: &mut tokio::process::Command) {
    let parent = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    set_pre_exec(command, move || die_with_parent(parent));
}

/// Child side, between fork and exec: arm the parent-death signal, then fail the
/// spawn if the parent is already gone.
fn die_with_parent(parent: i32) -> io::Result<()> {
    // The "parent" of PR_SET_PDEATHSIG is the spawning thread, which is a
    // tokio worker that lives as long as the runtime does.
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
    // quiver may have died before the signal was armed.
    if nix::unistd::getppid().as_raw() != parent {
        return Err(io::Error::from_raw_os_error(nix::libc::ESRCH));
    }
    Ok(())
}

/// The only unsafe code of the shell tools: registering a hook that runs in the
/// forked child, where only async-signal-safe calls are allowed.
#[allow(unsafe_code)]
fn set_pre_exec(command: &mut tokio::process::Command, hook: impl FnMut() -> io::Result<()> + Send + Sync + 'static) {
    // SAFETY: `hook` only makes async-signal-safe system calls (ioctl, prctl,
    // getppid), allocates nothing (the error values used carry a raw errno) and
    // touches no lock, so running it between fork and exec cannot deadlock.
    unsafe {
        command.pre_exec(hook);
    }
}

/// Makes the pseudo-terminal on fd 0 the controlling terminal of the new session
/// (so `\x03` through `exec_shell_interact` interrupts like Ctrl-C) and sets its size.
#[allow(unsafe_code)]
fn claim_terminal(size: &nix::libc::winsize) -> io::Result<()> {
    // SAFETY: plain ioctls on fd 0, which std has already made the terminal's slave
    // end; `size` outlives the call; no memory is shared with other threads.
    unsafe {
        if nix::libc::ioctl(0, nix::libc::TIOCSCTTY as _, 0) == -1 {
            return Err(io::Error::last_os_error());
        }
        // A wrong size only changes line wrapping; not worth failing the command for.
        let _ = nix::libc::ioctl(0, nix::libc::TIOCSWINSZ as _, size as *const nix::libc::winsize);
    }
    Ok(())
}
