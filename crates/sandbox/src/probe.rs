//! What confinement this kernel offers, asked once per process.

use std::sync::OnceLock;

/// The result of probing the running kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// Landlock's ABI version, or why Landlock cannot be used.
    pub landlock: Result<u32, String>,
    /// Whether seccomp filters can be installed, or why not.
    pub seccomp: Result<(), String>,
    /// Whether the namespace sandbox works here (unprivileged user
    /// namespaces, a fresh `/proc`, recursive read-only mounts), or why not.
    pub namespaces: Result<(), String>,
}

impl Probe {
    /// Both halves work: every policy can be enforced.
    pub fn is_complete(&self) -> bool {
        self.landlock.is_ok() && self.seccomp.is_ok()
    }

    /// One line for logs and the "sandbox unavailable" notice.
    pub fn describe(&self) -> String {
        let ll = match &self.landlock {
            Ok(abi) => format!("Landlock ABI {abi}"),
            Err(e) => format!("no Landlock ({e})"),
        };
        let sc = match &self.seccomp {
            Ok(()) => "seccomp".to_string(),
            Err(e) => format!("no seccomp ({e})"),
        };
        let ns = match &self.namespaces {
            Ok(()) => "namespaces".to_string(),
            Err(e) => format!("no namespaces ({e})"),
        };
        format!("{ns}, {ll}, {sc}")
    }
}

/// Probes once; later calls return the same answer.
pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(run)
}

#[cfg(not(target_os = "linux"))]
fn run() -> Probe {
    let why = format!("no OS sandbox is implemented for {} yet", std::env::consts::OS);
    Probe { landlock: Err(why.clone()), seccomp: Err(why.clone()), namespaces: Err(why) }
}

/// Restricts a throwaway thread, which is the only way the landlock crate
/// reports the kernel's ABI without unsafe code: Landlock and seccomp filters
/// (without TSYNC) apply to the calling thread only, and the thread exits
/// right after, starting nothing.
#[cfg(target_os = "linux")]
fn run() -> Probe {
    // Not from the restricted thread below: a child of a Landlock-restricted
    // thread may not mount.
    let namespaces = probe_namespaces();
    let joined = std::thread::Builder::new()
        .name("quiver-sandbox-probe".into())
        .spawn(|| (probe_landlock(), probe_seccomp()))
        .map_err(|e| e.to_string())
        .and_then(|handle| handle.join().map_err(|_| "the probe thread panicked".to_string()));
    match joined {
        Ok((landlock, seccomp)) => Probe { landlock, seccomp, namespaces },
        Err(e) => Probe { landlock: Err(e.clone()), seccomp: Err(e), namespaces },
    }
}

/// The variable that turns the namespace sandbox off (tests of the
/// fallback, and machines where it misbehaves).
pub const NO_USERNS_VAR: &str = "QUIVER_SANDBOX_NO_USERNS";

/// Runs `true` through the whole namespace sequence once.
#[cfg(target_os = "linux")]
fn probe_namespaces() -> Result<(), String> {
    if std::env::var_os(NO_USERNS_VAR).is_some_and(|v| !v.is_empty() && v != "0") {
        return Err(format!("turned off by {NO_USERNS_VAR}"));
    }
    let truth = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .ok_or_else(|| "no /usr/bin/true to probe with".to_string())?;
    let private = crate::namespace::Private::new().map_err(|e| format!("private directories: {e}"))?;
    let home = crate::protected::home_dir();
    let inputs = crate::namespace::Inputs {
        writable: &[],
        network: false,
        extra_read_only: &[],
        deny_programs: &[],
        rlimits: Vec::new(),
        home: home.as_deref(),
        home_allow: &[],
        stand_ins: &[],
        // Root's commands are mapped: probe the path they take.
        root_map: crate::namespace::idmap::RootMap::get(&[], &[]).ok().flatten(),
    };
    let plan = crate::namespace::plan(&private, &inputs, std::path::Path::new("/")).map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(truth);
    cmd.current_dir("/").stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
    crate::hook::register(&mut cmd, crate::hook::Step::Namespace(std::sync::Arc::new(plan)));
    match cmd.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("the namespace sequence failed ({status})")),
        Err(e) => Err(format!("user namespaces are refused here: {e}")),
    }
}

#[cfg(target_os = "linux")]
fn probe_landlock() -> Result<u32, String> {
    use landlock::{ABI, AccessFs, LandlockStatus, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr};
    let root = PathFd::new("/").map_err(|e| e.to_string())?;
    let status = Ruleset::default()
        .handle_access(AccessFs::Execute)
        .and_then(|r| r.create())
        .and_then(|r| r.add_rule(PathBeneath::new(root, AccessFs::Execute)))
        .and_then(|r| r.restrict_self())
        .map_err(|e| e.to_string())?;
    match status.landlock {
        LandlockStatus::Available { effective_abi, kernel_abi } => Ok(kernel_abi.map_or_else(
            || match effective_abi {
                ABI::V1 => 1,
                ABI::V2 => 2,
                ABI::V3 => 3,
                ABI::V4 => 4,
                ABI::V5 => 5,
                ABI::V6 => 6,
                ABI::V7 => 7,
                ABI::V8 => 8,
                ABI::V9 => 9,
                _ => 10,
            },
            |v| u32::try_from(v).unwrap_or(0),
        )),
        LandlockStatus::NotEnabled => Err("Landlock is built into the kernel but not enabled at boot".into()),
        LandlockStatus::NotImplemented => {
            Err("the kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)".into())
        }
    }
}

#[cfg(target_os = "linux")]
fn probe_seccomp() -> Result<(), String> {
    let filter = crate::seccomp::filter(true)?;
    seccompiler::apply_filter(&filter).map_err(|e| format!("installing a seccomp filter failed: {e}"))
}
