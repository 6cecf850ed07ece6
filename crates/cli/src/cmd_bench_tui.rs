//! `quiver bench tui`: how the interactive agent feels, as numbers. In the
//! process: frame times scrolling a long transcript and keypress-to-frame
//! while an answer streams. Out of it: the first frame after `quiver` starts
//! (this binary on a pseudo-terminal that answers like a terminal does) and
//! the CPU an idle session uses. The last line is the contract for scripts.

use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use quiver_tui::bench::{self, Stats};

use crate::setup;

#[derive(clap::Args)]
pub struct Args {
    /// Cells in the transcript that is scrolled.
    #[arg(long, default_value_t = 5000)]
    messages: usize,
    /// How fast the streamed answer arrives while keys are typed.
    #[arg(long, default_value_t = 200)]
    tokens_per_sec: u32,
    /// Seconds of streaming (and of idling, for the CPU figure).
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Starts of the real binary for the first-frame figure.
    #[arg(long, default_value_t = 10)]
    starts: usize,
}

fn line(name: &str, s: &Stats) -> String {
    format!("{name}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (n={})", s.p50_ms, s.p99_ms, s.max_ms, s.n)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (width, height) = (120, 40);
    let (first, scroll) = bench::scroll(args.messages, width, height)?;
    setup::out(&format!("scroll {} messages: first frame {:.2} ms", args.messages, first.as_secs_f64() * 1000.0));
    setup::out(&line("scroll frame", &scroll));
    let typing = bench::typing_while_streaming(args.tokens_per_sec, args.seconds, width, height)?;
    setup::out(&line(&format!("keypress to frame at {} tokens/s", args.tokens_per_sec), &typing));
    let dir = tempfile::tempdir()?;
    let mut starts = Vec::new();
    for _ in 0..args.starts {
        starts.push(first_frame(dir.path())?);
    }
    let starts = bench::stats(starts);
    setup::out(&line("first frame after start", &starts));
    let idle = idle_cpu(dir.path(), Duration::from_secs(args.seconds))?;
    setup::out(&format!("idle cpu: {idle:.2}% over {} s", args.seconds));
    setup::out(&format!(
        "first_frame_p50_ms={:.1} key_p50_ms={:.2} key_p99_ms={:.2} scroll_p50_ms={:.2} scroll_p99_ms={:.2} idle_cpu_pct={idle:.2}",
        starts.p50_ms, typing.p50_ms, typing.p99_ms, scroll.p50_ms, scroll.p99_ms
    ));
    Ok(ExitCode::SUCCESS)
}

/// `quiver` on a fresh pseudo-terminal (120×40) in an empty workspace with
/// its own config and state; nothing is sent to any model.
struct Session {
    child: std::process::Child,
    master: std::fs::File,
    seen: Vec<u8>,
}

impl Session {
    fn start(dir: &std::path::Path) -> anyhow::Result<Session> {
        let size = nix::pty::Winsize { ws_row: 40, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = nix::pty::openpty(Some(&size), None).context("openpty")?;
        let ws = dir.join("ws");
        std::fs::create_dir_all(&ws)?;
        let exe = std::env::current_exe()?;
        let child = Command::new(exe)
            .current_dir(&ws)
            .env("QUIVER_CONFIG_DIR", dir.join("config"))
            .env("QUIVER_STATE_DIR", dir.join("state"))
            .env("DEEPSEEK_API_KEY", "sk-bench")
            .env("TERM", "xterm-256color")
            .args(["--base-url", "http://127.0.0.1:9"])
            .stdin(Stdio::from(pty.slave.try_clone()?))
            .stdout(Stdio::from(pty.slave.try_clone()?))
            .stderr(Stdio::from(pty.slave))
            .spawn()?;
        let master = std::fs::File::from(pty.master);
        nix::fcntl::fcntl(&master, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK))?;
        Ok(Session { child, master, seen: Vec::new() })
    }

    /// Reads what the program wrote, answering the terminal queries a real
    /// terminal answers (device attributes), until `needle` shows or `limit`.
    fn wait_for(&mut self, needle: &str, limit: Duration) -> anyhow::Result<()> {
        let start = Instant::now();
        let mut buf = [0u8; 8192];
        loop {
            match self.master.read(&mut buf) {
                Ok(n) if n > 0 => {
                    let chunk = &buf[..n];
                    if chunk.windows(3).any(|w| w == b"\x1b[c") {
                        self.master.write_all(b"\x1b[?62;22c")?;
                    }
                    self.seen.extend_from_slice(chunk);
                    if String::from_utf8_lossy(&self.seen).contains(needle) {
                        return Ok(());
                    }
                }
                _ => std::thread::sleep(Duration::from_millis(1)),
            }
            anyhow::ensure!(start.elapsed() < limit, "no `{needle}` on the screen within {limit:?}");
        }
    }

    fn quit(mut self) -> anyhow::Result<()> {
        self.master.write_all(b"\x03")?;
        std::thread::sleep(Duration::from_millis(50));
        self.master.write_all(b"\x03")?;
        let start = Instant::now();
        while self.child.try_wait()?.is_none() {
            if start.elapsed() > Duration::from_secs(10) {
                let _ = self.child.kill();
                anyhow::bail!("quiver did not quit on Ctrl-C twice");
            }
            // Keep draining, so the program never blocks on a full pty.
            let _ = self.wait_for("\u{0}never", Duration::from_millis(20));
        }
        Ok(())
    }
}

/// Spawn to the footer on screen.
fn first_frame(dir: &std::path::Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut session = Session::start(dir)?;
    session.wait_for("Ctrl+P palette", Duration::from_secs(30))?;
    let took = started.elapsed();
    session.quit()?;
    Ok(took)
}

/// CPU time (user + system) the idle session's process used over `span`, as
/// a share of one core.
fn idle_cpu(dir: &std::path::Path, span: Duration) -> anyhow::Result<f64> {
    let mut session = Session::start(dir)?;
    session.wait_for("Ctrl+P palette", Duration::from_secs(30))?;
    std::thread::sleep(Duration::from_millis(500));
    let pid = session.child.id();
    let ticks = || -> anyhow::Result<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
        let fields: Vec<&str> =
            stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default().split_whitespace().collect();
        // utime and stime: fields 14 and 15 of the line, 12 and 13 after the name.
        Ok(fields.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
            + fields.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
    };
    let before = ticks()?;
    let started = Instant::now();
    while started.elapsed() < span {
        let _ = session.wait_for("\u{0}never", Duration::from_millis(100));
    }
    let used = ticks()? - before;
    let hz = 100.0; // USER_HZ on Linux
    let pct = used as f64 / hz / started.elapsed().as_secs_f64() * 100.0;
    session.quit()?;
    Ok(pct)
}
