#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use super::procfs::{self, Proc};

#[test]
fn stat_lines_with_odd_names() {
    let line = "4242 (we ird) name)) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 1 1";
    let p = procfs::parse_stat(line).unwrap();
    assert_eq!(p, Proc { ppid: 17, zombie: false, start: 987654 });
    let z = procfs::parse_stat("7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0 0").unwrap();
    assert!(z.zombie);
    assert!(procfs::parse_stat("garbage").is_none());
}

#[test]
fn own_stat_is_readable() {
    let me = procfs::stat(std::process::id() as i32).unwrap();
    assert!(me.start > 0);
    assert!(procfs::alive(std::process::id() as i32, me.start));
    assert!(!procfs::alive(std::process::id() as i32, me.start + 1));
}

#[test]
fn ancestry_is_bounded_and_correct() {
    let p = |ppid| Proc { ppid, zombie: false, start: 1 };
    let table: HashMap<i32, Proc> = [(10, p(1)), (11, p(10)), (12, p(11)), (20, p(1)), (30, p(31)), (31, p(30))].into();
    assert!(procfs::descends_from(&table, 12, 10));
    assert!(procfs::descends_from(&table, 10, 10));
    assert!(!procfs::descends_from(&table, 20, 10));
    // A cycle (a table read mid-change) ends.
    assert!(!procfs::descends_from(&table, 30, 10));
}

#[test]
fn parent_cgroup_names() {
    assert_eq!(super::cgroup::parse_parent_name("quiver.123.456.0"), Some((123, 456)));
    assert_eq!(super::cgroup::parse_parent_name("quiver.123.456"), None);
    assert_eq!(super::cgroup::parse_parent_name("other.1.2.3"), None);
}
