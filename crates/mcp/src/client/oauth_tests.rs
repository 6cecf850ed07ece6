use super::*;

fn credentials(client: &str) -> StoredCredentials {
    StoredCredentials::new(client.to_string(), None, vec!["mcp:basic".into()], Some(1))
}

#[test]
fn token_file_is_private_and_bound_to_server_and_url() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::new(dir.path(), "web", "https://a.example/mcp");
    store.write(credentials("cid")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "token file mode");
        let dir_mode = std::fs::metadata(store.path().parent().unwrap()).unwrap().permissions().mode() & 0o777;
        assert!(dir_mode & 0o077 == 0 || dir.path() == store.path().parent().unwrap(), "token dir mode {dir_mode:o}");
    }
    assert_eq!(store.read().unwrap().unwrap().client_id, "cid");
    // Rewriting replaces the file and keeps it private.
    store.write(credentials("cid2")).unwrap();
    assert_eq!(store.read().unwrap().unwrap().client_id, "cid2");

    // The same name at another URL is another file: no token leaks to it.
    let other = FileTokenStore::new(dir.path(), "web", "https://evil.example/mcp");
    assert_ne!(other.path(), store.path());
    assert!(other.read().unwrap().is_none());
    // A file copied under the other's name is still refused (it names its URL).
    std::fs::copy(store.path(), other.path()).unwrap();
    assert!(other.read().unwrap().is_none());

    assert!(store.delete().unwrap());
    assert!(!store.delete().unwrap());
    assert!(store.read().unwrap().is_none());
}

#[test]
fn a_corrupt_token_file_is_a_precise_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::new(dir.path(), "web", "https://a.example/mcp");
    std::fs::write(store.path(), "{not json").unwrap();
    let err = store.read().unwrap_err();
    assert!(err.contains("is not a quiver token file"), "{err}");
    // Nothing was lost: the file is still there for the user to inspect.
    assert!(store.path().exists());
}

#[test]
fn challenge_scopes_are_read_from_www_authenticate() {
    let h = r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://x/.well-known/oauth-protected-resource""#;
    assert_eq!(challenge_scopes(h), vec!["mcp:basic".to_string(), "mcp:write".to_string()]);
    assert!(challenge_scopes(r#"Bearer resource_metadata="http://x/""#).is_empty());
}
