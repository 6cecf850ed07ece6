//! Server names. A server's tools reach a model as `mcp__<server>__<tool>`
//! (`quiver_engine::names`: only `[A-Za-z0-9_-]`, no `__` inside the server
//! part, at most 64 characters in all). Names that would be changed on the
//! way there are refused when a server is added, so the name a user types is
//! the prefix they see; a name already in a file is read as before (and
//! sanitized), never rejected.

use quiver_engine::names::sanitize_server;

/// Long enough for any real name, short enough that `mcp__<name>__` leaves a
/// tool's own name 25 characters before the 64-character cut and hash.
pub const MAX_NAME_LEN: usize = 32;

/// Whether `name` may be given to a new server; the reason when not.
pub fn check(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a server name must not be empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!("at most {MAX_NAME_LEN} characters (it becomes the tool prefix `mcp__<name>__`)"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Err(format!("`{c}` is not allowed; use letters, digits, `-` and `_`"));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err("it must start with a letter or a digit".into());
    }
    if name.contains("__") || name.ends_with('_') {
        return Err("no `__` inside and no `_` at the end (tool names split at `__`)".into());
    }
    Ok(())
}

/// A name [`check`] accepts, made from one it refused (for the message).
pub fn suggest(name: &str) -> String {
    let mut s = sanitize_server(name);
    s = s.trim_start_matches(|c: char| !c.is_ascii_alphanumeric()).to_string();
    s.truncate(MAX_NAME_LEN);
    let s = s.trim_end_matches('_').to_string();
    if check(&s).is_ok() { s } else { "server".to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_names_are_their_own_prefix() {
        for name in ["everything", "my-server", "gh_2", "A1", "x"] {
            assert_eq!(check(name), Ok(()), "{name}");
            assert_eq!(sanitize_server(name), name);
        }
    }

    #[test]
    fn refused_names_say_why_and_get_a_suggestion() {
        for (name, why, suggestion) in [
            ("", "empty", "server"),
            ("my server", "` `", "my_server"),
            ("a__b", "`__`", "a_b"),
            ("tail_", "end", "tail"),
            ("-flag", "start", "flag"),
            ("_x", "start", "x"),
            ("über", "`ü`", "ber"),
            ("a.b", "`.`", "a_b"),
        ] {
            let err = check(name).unwrap_err();
            assert!(err.contains(why), "{name}: {err}");
            assert_eq!(suggest(name), suggestion, "{name}");
            assert_eq!(check(&suggest(name)), Ok(()));
        }
        let long = "a".repeat(MAX_NAME_LEN + 1);
        assert!(check(&long).unwrap_err().contains("at most"));
        assert_eq!(suggest(&long).len(), MAX_NAME_LEN);
    }
}
