use super::*;

fn key(ws: &Path, fp: &str) -> TrustKey {
    TrustKey { workspace: ws.to_path_buf(), subject: "srv".into(), fingerprint: fp.into() }
}

#[test]
fn an_approval_is_remembered_for_the_exact_config_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = TrustStore::at(dir.path().join("state/trust.json"));
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    assert!(!store.is_trusted(&key(&ws, "a")));
    store.trust(&key(&ws, "a")).unwrap();
    assert!(store.is_trusted(&key(&ws, "a")));
    assert!(!store.is_trusted(&key(&ws, "b")), "an edited config is asked about again");
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    assert!(!store.is_trusted(&key(&other, "a")), "another workspace is asked about again");
    assert!(store.revoke(&ws, "srv").unwrap());
    assert!(!store.is_trusted(&key(&ws, "a")));
}

#[cfg(unix)]
#[test]
fn the_trust_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trust.json");
    TrustStore::at(&path).trust(&key(dir.path(), "a")).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn an_ephemeral_store_trusts_nothing() {
    let store = TrustStore::ephemeral();
    store.trust(&key(Path::new("/"), "a")).unwrap();
    assert!(!store.is_trusted(&key(Path::new("/"), "a")));
}
