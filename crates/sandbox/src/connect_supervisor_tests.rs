use super::*;

#[test]
fn an_address_for_a_path_is_family_then_path_then_nul() {
    let addr = sockaddr_un(b"/proc/self/fd/7").unwrap();
    assert_eq!(&addr[..2], &(libc::AF_UNIX as u16).to_ne_bytes());
    assert_eq!(&addr[2..], b"/proc/self/fd/7\0");
    assert_eq!(sockaddr_un(&[b'x'; 200]), Err(libc::ENAMETOOLONG));
}

/// Every `connect` number of this architecture notifies; nothing else does.
#[test]
fn the_filter_hands_over_connect_and_nothing_else() {
    let filter = filter();
    let run = |arch: u32, nr: u32| -> u32 {
        // A tiny interpreter for the program's three instruction kinds.
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let insn = filter[pc];
            match insn.code as u32 {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    acc = if insn.k == ARCH_OFFSET { arch } else { nr };
                    pc += 1;
                }
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += 1 + if acc == insn.k { insn.jt as usize } else { insn.jf as usize };
                }
                _ => return insn.k,
            }
        }
    };
    assert_eq!(run(AUDIT_ARCH, libc::SYS_connect as u32), libc::SECCOMP_RET_USER_NOTIF);
    assert_eq!(run(AUDIT_ARCH, libc::SYS_openat as u32), libc::SECCOMP_RET_ALLOW);
    assert_eq!(run(0x4000_0003, libc::SYS_connect as u32), libc::SECCOMP_RET_ALLOW, "a foreign arch");
    #[cfg(target_arch = "x86_64")]
    assert_eq!(run(AUDIT_ARCH, X32_CONNECT), libc::SECCOMP_RET_USER_NOTIF);
}

#[test]
fn kernel_releases_compare_by_major_then_minor() {
    // This machine's own release parses (the tests run on Linux 5.9+).
    assert!(kernel_at_least(3, 0));
    assert!(!kernel_at_least(999, 0));
}

#[test]
fn a_process_descends_from_itself_and_its_ancestors_not_from_a_stranger() {
    let me = std::process::id() as libc::pid_t;
    let parent = parent_of(me).unwrap();
    assert!(descends_from(me, me));
    assert!(descends_from(me, parent));
    assert!(descends_from(me, 1), "every process descends from init");
    let child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
    assert!(descends_from(child.id() as libc::pid_t, me));
    assert!(!descends_from(me, child.id() as libc::pid_t), "a parent does not descend from its child");
    let mut child = child;
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_thread_belongs_to_its_process() {
    let me = std::process::id() as libc::pid_t;
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        // SAFETY: gettid has no arguments.
        #[allow(unsafe_code)]
        tid_tx.send(unsafe { libc::gettid() }).unwrap();
        done_rx.recv().unwrap();
    });
    let tid = tid_rx.recv().unwrap();
    assert_ne!(tid, me);
    assert_eq!(thread_group(tid), Some(me));
    assert_eq!(thread_group(me), Some(me));
    done_tx.send(()).unwrap();
    worker.join().unwrap();
}
