//! A policy made ready to apply: built once in the parent, applied to any
//! number of commands.

use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::sync::Arc;

use crate::hook::{PreExecTarget, Step};
use crate::policy::{SandboxPolicy, quiver_config_dir};

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce this policy (no Landlock, no seccomp, not
    /// Linux). The caller falls back to asking the user for every command.
    #[error("the OS sandbox is unavailable: {0}")]
    Unavailable(String),
    /// The kernel can, but preparing the rules failed (a temp dir could not be
    /// made, a rule was refused). Not a reason to run unconfined.
    #[error("preparing the OS sandbox failed: {0}")]
    Setup(String),
}

/// How a sandbox is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMechanism {
    /// User, mount, PID, IPC and UTS namespaces (and, without network, a
    /// network namespace with loopback only), with Landlock and seccomp
    /// inside (see the `namespace` module): the primary mechanism.
    Namespaces,
    /// Landlock and seccomp alone, where user namespaces are refused
    /// (AppArmor's restriction, some containers): see [`SandboxMechanism::gaps`].
    Landlock,
    /// No filesystem or network restriction (the `Full` policy with network).
    None,
}

impl SandboxMechanism {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMechanism::Namespaces => "namespaces",
            SandboxMechanism::Landlock => "landlock",
            SandboxMechanism::None => "none",
        }
    }

    /// What a command confined by this mechanism cannot do, for
    /// `quiver sandbox --check` (the gaps of a fallback are in [`Self::gaps`]).
    pub fn protects(self) -> &'static [&'static str] {
        match self {
            SandboxMechanism::None => &[],
            SandboxMechanism::Namespaces => &[
                "write outside the workspace and its private /tmp (/ is read-only, recursively)",
                "write the protected paths: .git/config, .git/hooks, .git/info, .git/modules, .quiver/, quiver.toml, .mcp.json, .envrc, .vscode/",
                "move or replace .git itself",
                "read the home beyond an allowlist: toolchains and package caches (`[sandbox] home_allow` adds more) and a .gitconfig with the user's identity only; never quiver's own config and state",
                "see other processes or their environment (own PID namespace, fresh /proc)",
                "reach host sockets: /run, /tmp's sockets and abstract sockets are gone",
                "connect to a Unix socket a host process listens on, by any path, bound before or after it started \
                 (each connect is decided by who listens; Linux 5.9+); no datagram Unix sockets",
                "reach the network (loopback only) unless network is granted, but for the hosts of `[sandbox] network_allow` over HTTPS through quiver's proxy",
                "type into terminals (TIOCSTI, TIOCLINUX), open the host's terminals (a devpts of its own; a session of its own, so /dev/tty is not the person's), or use io_uring",
                "read or add keys in the kernel keyring",
                "run a program a single-word deny rule names, by any spelling",
                "keep processes running after the command ends, or after quiver dies",
                "exceed 4096 tasks or 16 GiB of memory per command",
                "read root-only files when quiver runs as root: the command runs as nobody (65534), its writable roots idmapped so that it owns them and what it makes there is root's on disk",
            ],
            SandboxMechanism::Landlock => &[
                "write outside the workspace and its private temp dir (Landlock)",
                "read beyond an allowlist (Landlock): the system's trees (/usr, /bin, /lib*, /etc, /opt, /nix, /snap, /proc, /sys, /var/lib, /var/cache), PATH, the workspace and the working directory; of the home only toolchains and package caches (`[sandbox] home_allow` adds more), git seeing the user's identity only; never quiver's own config and state, /run, /tmp, another top-level directory",
                "open the host's terminals: of /dev only null, zero, full, random, urandom, tty and ptmx (a terminal it was handed keeps working)",
                "keep a change to the protected paths (.git/config, .git/hooks, .git/info, .git/modules, .git/commondir, nested repositories, what a repository's config names, .quiver/, quiver.toml, .mcp.json, .envrc, .vscode/): it is undone when the command ends, and named to the model",
                "open any socket but socketpair (seccomp), so neither the network nor host Unix sockets; with network \
                 granted, connect to a Unix socket a process outside the command listens on (each connect is \
                 decided by who listens; Linux 5.9+), and no datagram Unix sockets",
                "signal processes outside the sandbox or reach abstract sockets (Landlock scopes)",
                "type into terminals (TIOCSTI, TIOCLINUX) or use io_uring",
                "read or add keys in the kernel keyring",
                "exceed 4096 tasks or 16 GiB of memory per command",
            ],
        }
    }

    /// What this mechanism does not protect that the namespace sandbox does.
    pub fn gaps(self) -> &'static [&'static str] {
        match self {
            SandboxMechanism::Namespaces | SandboxMechanism::None => &[],
            SandboxMechanism::Landlock => &[
                "other processes' /proc entries stay readable (quiver's own environment is readable by a root command)",
                "chmod, chown, utime and xattrs work on files outside the workspace",
                "protected paths are put back after the command, not refused: a git command the user runs in the workspace while the command runs could see the change",
                "leftover background processes live until quiver kills the job",
                "no new pseudo-terminal (openpty, script, expect, tmux): its /dev/pts/N is closed like the host's; a terminal it was handed is not reopened by path (/dev/stdout), /dev/tty is",
                "with the workspace at the home, no new top-level entry of the home can be made, and names (not contents) of its hidden entries can be listed",
                "as root, root-only files in the system's trees (/etc/shadow, /var/lib's service state) stay readable: the uid is not changed",
                "without network, Unix sockets are refused altogether (no socket(AF_UNIX)); socketpair still works",
                "denied programs are refused by the command line's parse only",
            ],
        }
    }
}

/// Per-command resource limits (`RLIMIT_NPROC` counts tasks, threads
/// included; `RLIMIT_DATA` counts writable private memory, not address-space
/// reservations, so runtimes that reserve large ranges keep working).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    pub processes: Option<u64>,
    pub memory_bytes: Option<u64>,
}

/// What a sandbox is built with besides its policy.
#[derive(Debug, Clone, Default)]
pub struct SandboxOptions {
    /// More paths kept read-only inside the writable roots.
    pub read_only: Vec<PathBuf>,
    /// Program names (single-word deny rules; a trailing `*` matches a prefix)
    /// made unexecutable inside the namespace sandbox.
    pub deny_programs: Vec<String>,
    pub limits: Limits,
    /// Force a mechanism (tests; `quiver sandbox --mechanism`); default: the
    /// best this kernel offers.
    pub mechanism: Option<SandboxMechanism>,
    /// The home whose view is restricted to an allowlist (see the
    /// namespace sandbox); default `$HOME`.
    pub home: Option<PathBuf>,
    /// Entries of the home a command may read besides the toolchains,
    /// relative to the home. The user's own `[sandbox] home_allow` is added
    /// to these when the sandbox is built.
    pub home_allow: Vec<String>,
    /// Hosts a command without network may still reach over HTTPS, through
    /// quiver's proxy (`crates.io`, `*.crates.io`, `host:port`; see the
    /// `egress` module). The user's own `[sandbox] network_allow` is added
    /// when the sandbox is built. The namespace sandbox only.
    pub network_allow: Vec<String>,
}

/// A prepared sandbox. Rules are computed from the filesystem as it is when
/// this is built: build one per command (or per call) and keep it alive
/// while the command runs, since it owns the command's private temp dir.
#[derive(Debug)]
pub struct Sandbox {
    policy: SandboxPolicy,
    network: bool,
    read_only: Vec<PathBuf>,
    options: SandboxOptions,
    mechanism: SandboxMechanism,
    /// The Landlock fallback's own directory: the command's temp dir
    /// (`tmp/`, writable) and the files it reads but may not change
    /// (`gitconfig`).
    own: Option<tempfile::TempDir>,
    #[cfg(target_os = "linux")]
    private: Option<crate::namespace::Private>,
    /// The Landlock fallback's read allowlist and writable grants, kept to
    /// add a command's working directory to (see [`Sandbox::apply_to`]).
    #[cfg(target_os = "linux")]
    reads: Option<(crate::read_allow::ReadPlan, Vec<PathBuf>)>,
    /// The global git config the fallback's commands get (`GIT_CONFIG_GLOBAL`).
    git_config: Option<PathBuf>,
    /// The process-count limit where a pids cgroup can be made (it holds
    /// for root, which `RLIMIT_NPROC` does not).
    #[cfg(target_os = "linux")]
    pids: Option<crate::contain::pids::PidsCgroup>,
    /// Stand-ins for protected paths that did not exist, held while this
    /// sandbox lives (see the `placeholder` module).
    #[cfg(target_os = "linux")]
    stand_ins: crate::placeholder::Placeholders,
    /// The Landlock fallback's guard over the protected paths.
    #[cfg(target_os = "linux")]
    guard: Option<Arc<crate::guard::Guard>>,
    step: Option<Step>,
    /// The namespace sandbox's `connect` supervision (see `connect_supervisor`),
    /// where the kernel has it.
    #[cfg(target_os = "linux")]
    connect_filter: Option<Arc<crate::connect_supervisor::NotifyFilter>>,
    /// The proxy to the hosts of `network_allow` (see `egress`).
    #[cfg(target_os = "linux")]
    egress: Option<crate::egress::Proxy>,
}

impl Sandbox {
    /// `policy` for the filesystem, `network` to allow sockets.
    pub fn new(policy: SandboxPolicy, network: bool) -> Result<Self, SandboxError> {
        Self::with_options(policy, network, SandboxOptions::default())
    }

    /// Like [`new`](Self::new), with more paths kept read-only inside the
    /// writable roots (for instance files named in the user's config).
    pub fn with_read_only(policy: SandboxPolicy, network: bool, extra: &[PathBuf]) -> Result<Self, SandboxError> {
        Self::with_options(policy, network, SandboxOptions { read_only: extra.to_vec(), ..Default::default() })
    }

    pub fn with_options(policy: SandboxPolicy, network: bool, options: SandboxOptions) -> Result<Self, SandboxError> {
        let mut options = options;
        if let Some(path) = crate::policy::user_config_file() {
            // Read for every sandbox, so an edit applies to the next command;
            // a broken entry widens nothing and says so.
            match crate::policy::user_home_allow(&path) {
                Ok(extra) => options.home_allow.extend(extra),
                Err(e) => tracing::warn!(path = %path.display(), %e, "[sandbox] home_allow not applied"),
            }
            match crate::policy::user_sandbox_list(&path, "network_allow", "hosts", "[\"crates.io\", \"*.crates.io\"]")
            {
                Ok(extra) => options.network_allow.extend(extra),
                Err(e) => tracing::warn!(path = %path.display(), %e, "[sandbox] network_allow not applied"),
            }
        }
        if options.home.is_none() {
            options.home = crate::protected::home_dir();
        }
        let mut read_only: Vec<PathBuf> = Vec::new();
        if let SandboxPolicy::WorkspaceWrite { writable_roots } = &policy {
            for root in writable_roots {
                read_only.extend(crate::protected::WORKSPACE_PROTECTED.iter().map(|(p, _)| root.join(p)));
            }
        }
        read_only.extend(quiver_config_dir());
        read_only.extend(crate::policy::quiver_state_dir());
        read_only.extend(options.read_only.iter().cloned());
        let mut sandbox = Sandbox {
            policy,
            network,
            read_only,
            options,
            mechanism: SandboxMechanism::None,
            own: None,
            #[cfg(target_os = "linux")]
            private: None,
            #[cfg(target_os = "linux")]
            reads: None,
            git_config: None,
            #[cfg(target_os = "linux")]
            pids: None,
            #[cfg(target_os = "linux")]
            stand_ins: Default::default(),
            #[cfg(target_os = "linux")]
            guard: None,
            step: None,
            #[cfg(target_os = "linux")]
            connect_filter: None,
            #[cfg(target_os = "linux")]
            egress: None,
        };
        sandbox.prepare()?;
        Ok(sandbox)
    }

    #[cfg(not(target_os = "linux"))]
    fn prepare(&mut self) -> Result<(), SandboxError> {
        if self.policy.restricts_filesystem() || !self.network {
            return Err(SandboxError::Unavailable(format!(
                "no OS sandbox is implemented for {} yet",
                std::env::consts::OS
            )));
        }
        Ok(())
    }

    #[cfg(target_os = "linux")]
    fn prepare(&mut self) -> Result<(), SandboxError> {
        let probe = crate::probe::probe();
        if !self.policy.restricts_filesystem() && self.network {
            return Ok(());
        }
        self.mechanism = match self.options.mechanism {
            // No filesystem rule and no network: the socket filter alone.
            _ if !self.policy.restricts_filesystem() => SandboxMechanism::Landlock,
            Some(m) => m,
            None if probe.namespaces.is_ok() && probe.is_complete() => SandboxMechanism::Namespaces,
            None => SandboxMechanism::Landlock,
        };
        if let Err(why) = &probe.landlock {
            return Err(SandboxError::Unavailable(why.to_string()));
        }
        if let Err(why) = &probe.seccomp {
            return Err(SandboxError::Unavailable(why.to_string()));
        }
        if let Some(max) = self.options.limits.processes {
            self.pids = crate::contain::pids::PidsCgroup::new(max)
                .inspect_err(|e| tracing::debug!(%e, "no pids cgroup; the process limit is RLIMIT_NPROC alone"))
                .ok();
        }
        let mut writable = Vec::new();
        if let SandboxPolicy::WorkspaceWrite { writable_roots } = &self.policy {
            writable.extend(writable_roots.iter().cloned());
        }
        let setup = |what: &str, e: &dyn std::fmt::Display| SandboxError::Setup(format!("{what}: {e}"));
        let (landlock_writable, rules) = match self.mechanism {
            SandboxMechanism::Namespaces => {
                if let Err(why) = &probe.namespaces {
                    return Err(SandboxError::Unavailable(why.to_string()));
                }
                let private = crate::namespace::Private::new().map_err(|e| setup("the private directories", &e))?;
                for root in &writable {
                    crate::namespace::prepare_git(root);
                    // A protected path the command could otherwise create.
                    let absent = crate::protected::absent_protected(
                        &crate::paths::normalize(root),
                        self.options.home.as_deref(),
                    );
                    self.stand_ins.hold_all(&absent);
                }
                let mut granted = vec![private.tmp(), private.shm(), private.dev_dir()];
                granted.extend(writable.iter().cloned());
                self.private = Some(private);
                // The mounts keep the protected paths read-only and decide
                // what there is to read; Landlock only repeats the outer
                // boundary, so no root is split.
                (granted, crate::landlock_rules::Rules::default())
            }
            _ => {
                let own = tempfile::Builder::new()
                    .prefix("quiver-sandbox-")
                    .tempdir()
                    .map_err(|e| setup("creating the private temp dir", &e))?;
                let tmp = own.path().join("tmp");
                std::fs::create_dir(&tmp).map_err(|e| setup("creating the private temp dir", &e))?;
                let mut granted = vec![tmp];
                granted.extend(writable.iter().cloned());
                // The workspace is granted whole (splitting it around the
                // protected paths refused every new top-level entry): the
                // guard puts those back after the command instead. Only
                // what must not be read either is split out where a root
                // holds it: quiver's own config and state (which quiver
                // itself writes while a command runs) and a home's
                // configuration (`read_allow`).
                if !writable.is_empty() {
                    self.guard = Some(crate::guard::Guard::new(&writable, self.options.home.clone()));
                }
                let rules = if self.policy.restricts_filesystem() {
                    // Reads by allowlist (see `read_allow`): the system's
                    // trees, the home's toolchains, a few devices.
                    let mut plan =
                        crate::read_allow::plan(self.options.home.as_deref(), &self.options.home_allow, &writable);
                    if let Some(text) = &plan.gitconfig {
                        let file = own.path().join("gitconfig");
                        write_private_file(&file, text).map_err(|e| setup("writing the sandbox's git config", &e))?;
                        plan.roots.push(file.clone());
                        self.git_config = Some(file);
                    }
                    let rules = crate::landlock_rules::Rules {
                        read_only: plan.not_writable.clone(),
                        reads: Some(crate::landlock_rules::Reads {
                            roots: plan.roots.clone(),
                            closed: plan.closed.clone(),
                        }),
                    };
                    self.reads = Some((plan, granted.clone()));
                    rules
                } else {
                    crate::landlock_rules::Rules::default()
                };
                self.own = Some(own);
                (granted, rules)
            }
        };
        let landlock = if self.policy.restricts_filesystem() {
            Some(Arc::new(crate::landlock_rules::build(&landlock_writable, &rules).map_err(SandboxError::Setup)?))
        } else {
            None
        };
        // In the namespace sandbox the network namespace does what the
        // socket filter does in the fallback (and leaves loopback working).
        let deny_sockets = !self.network && self.mechanism == SandboxMechanism::Landlock;
        // A path socket ignores network namespaces: the supervisor decides
        // each connect by who listens (see `connect_supervisor`).
        // The fallback without network makes no socket at all (`deny_sockets`).
        let unix_sockets = self.mechanism == SandboxMechanism::Namespaces
            || (self.mechanism == SandboxMechanism::Landlock && self.network);
        if unix_sockets {
            if crate::connect_supervisor::supported() {
                self.connect_filter = Some(Arc::new(crate::connect_supervisor::filter()));
            } else {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    tracing::warn!(
                        "sandbox: this kernel (before 5.9) cannot supervise connect(2): a Unix socket a host \
                         process binds where a command can see it, after the command started, stays reachable"
                    )
                });
            }
        }
        if !self.network && !self.options.network_allow.is_empty() {
            self.egress = self.start_egress();
        }
        let deny_unix_datagrams = self.connect_filter.is_some();
        let seccomp =
            Some(Arc::new(crate::seccomp::filter(deny_sockets, deny_unix_datagrams).map_err(SandboxError::Setup)?));
        self.step = Some(Step::Confine { landlock, seccomp });
        Ok(())
    }

    /// The proxy to `network_allow`'s hosts: the namespace sandbox with
    /// `connect` supervision only (elsewhere nothing can hand the proxy to
    /// a command that has no network), said once otherwise.
    #[cfg(target_os = "linux")]
    fn start_egress(&self) -> Option<crate::egress::Proxy> {
        let mut allowed = Vec::new();
        for entry in &self.options.network_allow {
            match crate::egress::Allowed::parse(entry) {
                Ok(a) => allowed.push(a),
                Err(e) => tracing::warn!("sandbox: {e}; entry skipped"),
            }
        }
        if allowed.is_empty() {
            return None;
        }
        if self.mechanism != SandboxMechanism::Namespaces || self.connect_filter.is_none() {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::warn!(
                    "sandbox: `[sandbox] network_allow` needs the namespace sandbox on Linux 5.9 or later; commands \
                     without network reach no host here"
                )
            });
            return None;
        }
        match crate::egress::Proxy::start(allowed) {
            Ok(proxy) => Some(proxy),
            Err(e) => {
                tracing::warn!(%e, "sandbox: cannot start the proxy for `[sandbox] network_allow`");
                None
            }
        }
    }

    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    pub fn network(&self) -> bool {
        self.network
    }

    /// The mechanism that enforces this sandbox.
    pub fn mechanism(&self) -> SandboxMechanism {
        self.mechanism
    }

    /// Paths kept read-only even inside a writable root.
    pub fn read_only_paths(&self) -> &[PathBuf] {
        &self.read_only
    }

    /// After a command has ended: in the Landlock fallback, puts back every
    /// protected path the command changed and says what was undone, one
    /// sentence each, for the model (the namespace sandbox refuses such
    /// writes instead: nothing to undo, an empty list). Also done when the
    /// sandbox is dropped.
    pub fn restore_protected(&self) -> Vec<String> {
        #[cfg(target_os = "linux")]
        if let Some(guard) = &self.guard {
            return guard.restore();
        }
        Vec::new()
    }

    /// The host path of the command's private temp dir, when the filesystem
    /// is restricted (inside the namespace sandbox it is the command's `/tmp`).
    pub fn tmp_dir(&self) -> Option<PathBuf> {
        #[cfg(target_os = "linux")]
        if let Some(private) = &self.private {
            return Some(private.tmp());
        }
        self.own.as_ref().map(|t| t.path().join("tmp"))
    }

    /// What `TMPDIR` is set to for the command.
    pub fn command_tmp_dir(&self) -> Option<PathBuf> {
        match self.mechanism {
            SandboxMechanism::Namespaces => Some(PathBuf::from("/tmp")),
            _ => self.tmp_dir(),
        }
    }

    /// Confines `cmd` when it spawns: sets `TMPDIR`/`TMP`/`TEMP` and registers
    /// the pre-exec steps. Apply the environment policy first (clearing the
    /// environment afterwards would drop `TMPDIR`), and register the
    /// containment job and the parent-death signal *before* this: in the
    /// namespace sandbox, hooks registered later run inside the namespace.
    pub fn apply_to(&self, cmd: &mut impl PreExecTarget) -> Result<(), SandboxError> {
        let cmd = cmd.std_command();
        if let Some(tmp) = self.command_tmp_dir() {
            for var in ["TMPDIR", "TMP", "TEMP"] {
                cmd.env(var, &tmp);
            }
        }
        // The home's `.gitconfig` is out of reach in the fallback: git
        // reads the user's identity from the sandbox's own file instead.
        if let Some(file) = &self.git_config {
            cmd.env("GIT_CONFIG_GLOBAL", file);
        }
        // Joined first, by the process that then builds the namespaces, so
        // every process of the command counts against `pids.max`.
        #[cfg(target_os = "linux")]
        if let Some(pids) = &self.pids {
            crate::hook::register(cmd, Step::JoinCgroup(pids.procs()));
        }
        #[cfg(target_os = "linux")]
        if let Some(private) = &self.private {
            let cwd = command_cwd(cmd);
            let writable = match &self.policy {
                SandboxPolicy::WorkspaceWrite { writable_roots } => writable_roots.clone(),
                _ => Vec::new(),
            };
            // Ancestors the sandbox rebuilds itself (its private /tmp, a
            // home it replaces) are open whatever they are on the host.
            let replaced: Vec<PathBuf> = std::fs::canonicalize("/tmp")
                .ok()
                .into_iter()
                .chain(self.options.home.clone().filter(|h| crate::namespace::home::is_replaced(h, &writable)))
                .collect();
            let root_map = crate::namespace::idmap::root_map_or_warn(&writable, &replaced);
            let mut limits = rlimits(&self.options.limits);
            if root_map.is_some() {
                // Every root command runs as the same unprivileged uid, whose
                // RLIMIT_NPROC counts them all together: where a pids cgroup
                // limits this command alone, that is the limit.
                if self.pids.is_some() {
                    limits.retain(|(r, _)| *r != libc::RLIMIT_NPROC);
                }
                // Outside the idmapped writable roots every repository is
                // someone else's to the command: git would refuse them all
                // ("dubious ownership"), a repository above the workspace
                // included. Inside the sandbox that check protects nothing.
                // Added after any entries the command already carries.
                let count = cmd
                    .get_envs()
                    .find(|(k, _)| *k == "GIT_CONFIG_COUNT")
                    .and_then(|(_, v)| v?.to_str()?.parse::<usize>().ok())
                    .unwrap_or(0);
                cmd.env(format!("GIT_CONFIG_KEY_{count}"), "safe.directory")
                    .env(format!("GIT_CONFIG_VALUE_{count}"), "*")
                    .env("GIT_CONFIG_COUNT", (count + 1).to_string());
            }
            let inputs = crate::namespace::Inputs {
                writable: &writable,
                network: self.network,
                extra_read_only: &self.options.read_only,
                deny_programs: &self.options.deny_programs,
                rlimits: limits,
                home: self.options.home.as_deref(),
                home_allow: &self.options.home_allow,
                stand_ins: self.stand_ins.paths(),
                root_map,
            };
            let plan = crate::namespace::plan(private, &inputs, &cwd)
                .map_err(|e| SandboxError::Setup(format!("planning the namespace sandbox: {e}")))?;
            crate::hook::register(cmd, Step::Namespace(Arc::new(plan)));
        }
        #[cfg(target_os = "linux")]
        if self.mechanism == SandboxMechanism::Landlock {
            // RLIMIT_NPROC outside a user namespace counts every process of
            // the user on the machine: only the memory limit applies here.
            let limits: Vec<_> =
                rlimits(&self.options.limits).into_iter().filter(|(r, _)| *r == libc::RLIMIT_DATA).collect();
            if !limits.is_empty() {
                crate::hook::register(cmd, Step::Limits(Arc::new(limits)));
            }
        }
        if let Some(step) = self.step_for(cmd)? {
            crate::hook::register(cmd, step);
        }
        #[cfg(target_os = "linux")]
        let proxy = self.egress.as_ref().map(crate::egress::Proxy::addr);
        #[cfg(target_os = "linux")]
        if let Some(proxy) = proxy {
            // Inside the command's network namespace the proxy is at the same
            // port on its own loopback; the connect supervisor hands it over.
            let url = format!("http://127.0.0.1:{}", proxy.port());
            for var in ["HTTPS_PROXY", "https_proxy"] {
                cmd.env(var, &url);
            }
            for var in ["NO_PROXY", "no_proxy"] {
                cmd.env(var, "localhost,127.0.0.1,::1");
            }
        }
        #[cfg(target_os = "linux")]
        if let Some(filter) = &self.connect_filter {
            let send = crate::connect_supervisor::channel(proxy)
                .map_err(|e| SandboxError::Setup(format!("starting the connect supervisor: {e}")))?;
            crate::hook::register(cmd, Step::SuperviseConnect { send, filter: filter.clone() });
        }
        Ok(())
    }

    /// The confining step for `cmd`: in the Landlock fallback, a working
    /// directory outside every grant is added for reading (the namespace
    /// sandbox keeps it in sight too), unless it holds the home or is `/`.
    fn step_for(&self, cmd: &std::process::Command) -> Result<Option<Step>, SandboxError> {
        #[cfg(target_os = "linux")]
        if let (Some((plan, granted)), Some(Step::Confine { landlock: Some(_), seccomp })) = (&self.reads, &self.step) {
            let cwd = command_cwd(cmd);
            if crate::read_allow::cwd_needs_grant(plan, granted, &cwd) {
                let mut reads = crate::landlock_rules::Reads { roots: plan.roots.clone(), closed: plan.closed.clone() };
                reads.roots.push(cwd);
                let rules = crate::landlock_rules::Rules { read_only: plan.not_writable.clone(), reads: Some(reads) };
                let landlock = crate::landlock_rules::build(granted, &rules).map_err(SandboxError::Setup)?;
                return Ok(Some(Step::Confine { landlock: Some(Arc::new(landlock)), seccomp: seccomp.clone() }));
            }
        }
        Ok(self.step.clone())
    }
}

/// The working directory `cmd` will start in.
#[cfg(target_os = "linux")]
fn command_cwd(cmd: &std::process::Command) -> PathBuf {
    match cmd.get_current_dir() {
        Some(dir) if dir.is_absolute() => dir.to_path_buf(),
        Some(dir) => std::env::current_dir().map(|c| c.join(dir)).unwrap_or_else(|_| dir.to_path_buf()),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    }
}

/// A file of the sandbox's own, readable by its owner only (the command
/// runs as the same uid; a name and email are nobody else's business).
#[cfg(target_os = "linux")]
fn write_private_file(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        for undone in self.restore_protected() {
            tracing::warn!("sandbox: {undone}");
        }
    }
}

#[cfg(target_os = "linux")]
fn rlimits(limits: &Limits) -> Vec<(crate::namespace::Resource, u64)> {
    let mut out = Vec::new();
    if let Some(n) = limits.processes {
        out.push((libc::RLIMIT_NPROC, n));
    }
    if let Some(bytes) = limits.memory_bytes {
        out.push((libc::RLIMIT_DATA, bytes));
    }
    out
}
