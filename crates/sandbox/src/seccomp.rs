//! The network half of a policy: a seccomp filter, compiled in the parent.
//!
//! Why seccomp rather than Landlock's TCP rules: Landlock (ABI 4+) only
//! controls TCP `bind`/`connect`; UDP (DNS, QUIC), raw and packet sockets
//! would stay open. Refusing `socket(2)` for every family but `AF_UNIX` closes
//! all of them at once, while local tools that talk over Unix sockets (ssh
//! agents, language servers, `make -j` jobservers use pipes) keep working. A
//! network namespace would need privileges or user namespaces, which many
//! distributions restrict.
//!
//! Also refused: `socketpair` for non-Unix families (there are none today, it
//! keeps the rule symmetric) and io_uring, whose `IORING_OP_SOCKET` would make
//! a socket without the `socket` system call. Calls from a foreign ABI (32-bit
//! `int 0x80`, whose `socketcall` multiplexer the argument check cannot see)
//! kill the process (seccompiler's architecture check); the x32 numbers of the
//! refused calls are refused too.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Added to a syscall number by the x32 ABI, which shares x86_64's audit arch.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

fn arch() -> Result<TargetArch, String> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| format!("seccomp: unsupported architecture: {e}"))
}

/// A filter that refuses (`EPERM`) every socket that is not `AF_UNIX`.
pub(crate) fn deny_network() -> Result<BpfProgram, String> {
    let not_unix = || -> Result<Vec<SeccompRule>, String> {
        let cond = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64)
            .map_err(|e| e.to_string())?;
        Ok(vec![SeccompRule::new(vec![cond]).map_err(|e| e.to_string())?])
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, not_unix()?);
    rules.insert(libc::SYS_socketpair, not_unix()?);
    // An empty rule list matches the call unconditionally.
    for nr in [libc::SYS_io_uring_setup, libc::SYS_io_uring_enter, libc::SYS_io_uring_register] {
        rules.insert(nr, Vec::new());
    }
    #[cfg(target_arch = "x86_64")]
    for nr in [
        libc::SYS_socket,
        libc::SYS_socketpair,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(nr | X32_SYSCALL_BIT, Vec::new());
    }
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch()?)
        .map_err(|e| format!("seccomp filter: {e}"))?;
    BpfProgram::try_from(filter).map_err(|e| format!("seccomp compile: {e}"))
}
