//! A PID namespace of its own for a process quiver starts outside the
//! sandbox: a stdio MCP server from the user's config.
//!
//! Such a server runs with the user's rights on the filesystem and the
//! network (it needs them), but has no business with quiver itself: in the
//! host's PID namespace it could signal quiver, read its command line and
//! walk every other process of the user's. In a namespace of its own its
//! `/proc` shows only its own tree, and every pid outside it is unreachable.
//! It costs the namespace sandbox's fork chain (P0 → P1 → the server, see
//! `namespace::child`): when P1, the namespace's init, dies, the kernel kills
//! whatever the server left behind.

use std::path::Path;

use crate::hook::PreExecTarget;

/// Starts `cmd` in a PID namespace of its own, with a fresh `/proc`; the
/// filesystem, network and everything else stay as they are. Register it
/// after every other hook: it forks, and a hook registered later runs in the
/// command's process only (a cgroup join or parent-death signal must be
/// the first fork's). `cwd` is the command's working directory. Returns
/// whether it did: where user namespaces are refused (AppArmor, a
/// container, `QUIVER_SANDBOX_NO_USERNS`) the command starts in quiver's
/// PID namespace as before, and the log says so once.
pub fn own_pid_namespace(cmd: &mut impl PreExecTarget, cwd: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        static WARNED: std::sync::Once = std::sync::Once::new();
        let plan = match &crate::probe().namespaces {
            Ok(()) => crate::namespace::pids_only(cwd).map_err(|e| e.to_string()),
            Err(why) => Err(why.to_string()),
        };
        match plan {
            Ok(plan) => {
                crate::hook::register(cmd.std_command(), crate::hook::Step::Namespace(std::sync::Arc::new(plan)));
                true
            }
            Err(why) => {
                WARNED.call_once(|| {
                    tracing::warn!(%why, "MCP servers start in quiver's own PID namespace, where they can see and signal it");
                });
                false
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (cmd, cwd);
        false
    }
}
