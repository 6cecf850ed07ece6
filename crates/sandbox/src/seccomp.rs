//! The seccomp filter, compiled in the parent.
//!
//! In the namespace sandbox the network namespace keeps a command off the
//! network and off host sockets; this filter adds what namespaces do not
//! cover (terminal injection, io_uring). In the Landlock fallback it is also
//! the network boundary: Landlock's TCP rules (ABI 4+) leave UDP, raw and
//! Unix sockets open, so `socket(2)` is refused for every family. Calls from a foreign ABI (32-bit
//! `int 0x80`, whose `socketcall` multiplexer the argument check cannot see)
//! kill the process (seccompiler's architecture check); the x32 numbers of the
//! refused calls are refused too.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Calls refused whatever their arguments: io_uring, and the kernel
/// keyring (the session keyring a command inherits holds whatever the
/// user's login put there: kerberos tickets, ecryptfs and fscrypt keys,
/// tokens a credential helper stored, readable with `keyctl print`; no
/// build needs it).
const REFUSED: [i64; 6] = [
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
];

/// Added to a syscall number by the x32 ABI, which shares x86_64's audit arch.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

fn arch() -> Result<TargetArch, String> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| format!("seccomp: unsupported architecture: {e}"))
}

/// The filter every sandboxed command gets: no io_uring (its
/// `IORING_OP_SOCKET` makes sockets without `socket(2)`), no `TIOCSTI` or
/// `TIOCLINUX` (typing into a terminal the command shares with a person), no
/// kernel keyring (`keyctl`, `add_key`, `request_key`), and
/// with `deny_sockets` no `socket(2)` of any family (the Landlock fallback
/// without network: a network namespace is not there to keep a command off
/// the network and off host Unix sockets; `socketpair` for `AF_UNIX` stays).
/// With `deny_unix_datagrams`, no datagram Unix socket either, by `socket`
/// or `socketpair` (where `connect` is supervised, see `connect_supervisor`: a
/// datagram names its destination inside `sendmsg`'s message, out of a
/// filter's sight).
pub(crate) fn filter(deny_sockets: bool, deny_unix_datagrams: bool) -> Result<BpfProgram, String> {
    let cond = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
    };
    let rule = |conds: Vec<SeccompCondition>| SeccompRule::new(conds).map_err(|e| e.to_string());
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // The kernel reads ioctl's request as 32 bits, so a Dword compare sees
    // every spelling of it.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    if deny_sockets {
        rules.insert(libc::SYS_socket, Vec::new());
        rules.insert(libc::SYS_socketpair, vec![rule(vec![cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?])?]);
    } else if deny_unix_datagrams {
        // The type's low bits name it; the high ones are SOCK_NONBLOCK and SOCK_CLOEXEC.
        let datagram = || -> Result<SeccompRule, String> {
            rule(vec![
                cond(0, SeccompCmpOp::Eq, libc::AF_UNIX as u64)?,
                cond(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_DGRAM as u64)?,
            ])
        };
        rules.insert(libc::SYS_socket, vec![datagram()?]);
        rules.insert(libc::SYS_socketpair, vec![datagram()?]);
    }
    for nr in REFUSED {
        rules.insert(nr, Vec::new());
    }
    #[cfg(target_arch = "x86_64")]
    {
        let mut x32 = vec![libc::SYS_ioctl];
        x32.extend(REFUSED);
        if deny_sockets || deny_unix_datagrams {
            x32.extend([libc::SYS_socket, libc::SYS_socketpair]);
        }
        for nr in x32 {
            rules.insert(nr | X32_SYSCALL_BIT, Vec::new());
        }
    }
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch()?)
        .map_err(|e| format!("seccomp filter: {e}"))?;
    BpfProgram::try_from(filter).map_err(|e| format!("seccomp compile: {e}"))
}
