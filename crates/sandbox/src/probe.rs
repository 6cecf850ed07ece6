//! What confinement this kernel offers, asked once per process.

use std::sync::OnceLock;

/// The result of probing the running kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// Landlock's ABI version, or why Landlock cannot be used.
    pub landlock: Result<u32, ProbeError>,
    /// Whether seccomp filters can be installed, or why not.
    pub seccomp: Result<(), ProbeError>,
    /// Whether the namespace sandbox works here (unprivileged user
    /// namespaces, a fresh `/proc`, recursive read-only mounts), or why not.
    pub namespaces: Result<(), ProbeError>,
}

/// Why a mechanism cannot be used here. The text is what `quiver sandbox
/// --check`, the logs and skipped tests show. Causes from other crates are
/// kept as text so a [`Probe`] stays `Clone` and comparable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    #[error("no OS sandbox is implemented for {0} yet")]
    UnsupportedOs(&'static str),
    /// The throwaway thread the Landlock and seccomp probes run on did not start.
    #[error("{0}")]
    ThreadSpawn(String),
    #[error("the probe thread panicked")]
    ThreadPanicked,
    /// [`NO_USERNS_VAR`] is set.
    #[error("turned off by {NO_USERNS_VAR}")]
    TurnedOff,
    #[error("no /usr/bin/true to probe with")]
    NoTrue,
    #[error("private directories: {0}")]
    PrivateDirs(String),
    /// The namespace sequence could not be planned.
    #[error("{0}")]
    NamespacePlan(String),
    /// The sequence ran and `true` did not succeed.
    #[error("the namespace sequence failed ({0})")]
    NamespaceFailed(std::process::ExitStatus),
    /// The kernel refused to start the sequence.
    #[error("user namespaces are refused here: {0}")]
    UsernsRefused(String),
    /// A Landlock ruleset could not be made or applied.
    #[error("{0}")]
    Landlock(String),
    #[error("Landlock is built into the kernel but not enabled at boot")]
    LandlockNotEnabled,
    #[error("the kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)")]
    LandlockNotImplemented,
    /// The seccomp filter could not be built.
    #[error("{0}")]
    SeccompFilter(String),
    #[error("installing a seccomp filter failed: {0}")]
    SeccompInstall(String),
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
    let why = ProbeError::UnsupportedOs(std::env::consts::OS);
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
        .map_err(|e| ProbeError::ThreadSpawn(e.to_string()))
        .and_then(|handle| handle.join().map_err(|_| ProbeError::ThreadPanicked));
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
fn probe_namespaces() -> Result<(), ProbeError> {
    if std::env::var_os(NO_USERNS_VAR).is_some_and(|v| !v.is_empty() && v != "0") {
        return Err(ProbeError::TurnedOff);
    }
    let truth = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .ok_or(ProbeError::NoTrue)?;
    let private = crate::namespace::Private::new().map_err(|e| ProbeError::PrivateDirs(e.to_string()))?;
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
    let plan = crate::namespace::plan(&private, &inputs, std::path::Path::new("/"))
        .map_err(|e| ProbeError::NamespacePlan(e.to_string()))?;
    let mut cmd = std::process::Command::new(truth);
    cmd.current_dir("/").stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
    crate::hook::register(&mut cmd, crate::hook::Step::Namespace(std::sync::Arc::new(plan)));
    match cmd.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(ProbeError::NamespaceFailed(status)),
        Err(e) => Err(ProbeError::UsernsRefused(e.to_string())),
    }
}

#[cfg(target_os = "linux")]
fn probe_landlock() -> Result<u32, ProbeError> {
    use landlock::{ABI, AccessFs, LandlockStatus, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr};
    let root = PathFd::new("/").map_err(|e| ProbeError::Landlock(e.to_string()))?;
    let status = Ruleset::default()
        .handle_access(AccessFs::Execute)
        .and_then(|r| r.create())
        .and_then(|r| r.add_rule(PathBeneath::new(root, AccessFs::Execute)))
        .and_then(|r| r.restrict_self())
        .map_err(|e| ProbeError::Landlock(e.to_string()))?;
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
        LandlockStatus::NotEnabled => Err(ProbeError::LandlockNotEnabled),
        LandlockStatus::NotImplemented => Err(ProbeError::LandlockNotImplemented),
    }
}

#[cfg(target_os = "linux")]
fn probe_seccomp() -> Result<(), ProbeError> {
    let filter = crate::seccomp::filter(true, false).map_err(ProbeError::SeccompFilter)?;
    seccompiler::apply_filter(&filter).map_err(|e| ProbeError::SeccompInstall(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasons read as they did when they were strings: the check
    /// command and the logs print them.
    #[test]
    fn describe_names_each_missing_mechanism_and_why() {
        let probe = Probe {
            landlock: Err(ProbeError::LandlockNotEnabled),
            seccomp: Err(ProbeError::SeccompInstall("EINVAL".into())),
            namespaces: Err(ProbeError::TurnedOff),
        };
        assert_eq!(
            probe.describe(),
            "no namespaces (turned off by QUIVER_SANDBOX_NO_USERNS), \
             no Landlock (Landlock is built into the kernel but not enabled at boot), \
             no seccomp (installing a seccomp filter failed: EINVAL)"
        );
        let probe =
            Probe { landlock: Ok(6), seccomp: Ok(()), namespaces: Err(ProbeError::PrivateDirs("EACCES".into())) };
        assert_eq!(probe.describe(), "no namespaces (private directories: EACCES), Landlock ABI 6, seccomp");
    }
}
