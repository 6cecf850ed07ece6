//! The objects of a request: the code identifiers, paths, file names and
//! URLs a person types are what the request is *about*, not words that name
//! a tool. `where do we call retry_with_backoff` asks for a code search
//! whatever `retry` and `backoff` mean; `replace http:// with https:// in
//! docs/links.md` edits a file whatever a URL suggests.
//!
//! A sentence model reads every word of a request, so before a request is
//! embedded each object is replaced by the word for its kind (`symbol`,
//! `file`, `folder`, `url`): the vector then carries the request's verb and
//! the kind of thing it acts on, and one identifier's words cannot pull it
//! toward an unrelated tool. The lexical ranker marks the same tokens as
//! literals (`tokenize.rs`) and weighs them down instead.
//!
//! The shapes themselves (a URL, a file name, a snake_case or camelCase
//! identifier) live here too, so that the tokenizer and the query analysis
//! both read them from one place below them.

use std::borrow::Cow;

/// Words after which a capitalised word is a type's name (`struct
/// SessionState`, `class UserService`), not a product's (`GitHub`, `MySQL`).
const TYPE_KEYWORDS: &[&str] = &["struct", "class", "enum", "trait", "interface", "type", "impl", "record"];

/// The standard library's macros people name bare (`use println! instead`).
const RUST_MACROS: &[&str] = &[
    "println",
    "print",
    "eprintln",
    "eprint",
    "format",
    "vec",
    "dbg",
    "assert",
    "panic",
    "todo",
    "unimplemented",
    "unreachable",
    "write",
    "writeln",
    "matches",
    "concat",
    "include_str",
    "env",
    "format_args",
];

/// What kind of object one whitespace-separated token is, if any.
pub(super) fn kind_of(token: &str, previous: Option<&str>) -> Option<&'static str> {
    // `<server_name>`: a template's placeholder names a value's kind already
    let bare = token.trim_end_matches([',', '.', ';', ':', '?']);
    if bare.starts_with('<') && bare.ends_with('>') {
        return None;
    }
    let t = token.trim_matches(|c: char| "()[]<>'\"`,;:?{}".contains(c)).trim_end_matches('.');
    if t.is_empty() {
        return None;
    }
    if is_url(t) {
        // a GitHub issue or pull request's URL names the issue: its words stay
        return (!is_github_reference(t)).then_some("url");
    }
    // `http://` alone: a scheme as text (replace http:// with https://)
    if t.ends_with("://") {
        return Some("scheme");
    }
    if is_file_token(t) && !member(t) {
        return Some("file");
    }
    let slashes = t.matches('/').count();
    if t.starts_with("./") || t.starts_with("~/") || t.starts_with("../") || slashes >= 2 || t.ends_with('/') {
        return Some("folder");
    }
    // `@Transactional`, `@router.post`: an annotation or a decorator (`@alice`
    // is a person)
    let decorator = t.strip_prefix('@').filter(|rest| {
        rest.starts_with(|c: char| c.is_ascii_uppercase()) || (rest.contains('.') && !rest.contains('/'))
    });
    if decorator.is_some() {
        return Some("symbol");
    }
    let code = t.trim_end_matches(['(', ')']).trim_end_matches('!');
    let word = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_');
    let identifier = |p: &str| snake_identifier(p) || camel_identifier(p) || pascal_identifier(p) || shouting(p);
    // `crate::net::pool`, `PaymentGateway.charge`, `process.env.STRIPE_KEY`:
    // names joined by `::` or `.`, one of them shaped like code
    let joined = |sep: &str| {
        code.contains(sep) && code.split(sep).all(word) && code.split(sep).any(|p| identifier(p) || sep == "::")
    };
    // `println!`, `vec![..]`, `assert_eq!(..)`: a Rust macro (a bare `yes!` is prose)
    let bang = t.find('!').map(|i| (&t[..i], &t[i + 1..]));
    let macro_call = bang.is_some_and(|(name, after)| {
        name.len() >= 2
            && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            && (after.starts_with(['(', '[', '{']) || name.contains('_') || RUST_MACROS.contains(&name))
    });
    // `eval(`, `handleRetry()`: a function named with its parentheses
    let called = bare.ends_with('(') || bare.ends_with("()");
    let typed = previous.is_some_and(|p| TYPE_KEYWORDS.contains(&p.to_ascii_lowercase().as_str()))
        && code.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    if macro_call || (word(code) && (identifier(code) || called || typed)) || joined("::") || joined(".") {
        return Some("symbol");
    }
    None
}

/// `OrderStatus.CANCELLED`, `PaymentGateway.charge`: a member of a type,
/// which a file name resembles (`UserService.java` is a file: its extension
/// is a short lowercase word).
fn member(t: &str) -> bool {
    let Some((owner, name)) = t.rsplit_once('.') else { return false };
    let owner = owner.rsplit(['.', '/']).next().unwrap_or(owner);
    name.chars().any(|c| c.is_ascii_uppercase() || c == '_')
        || (name.len() >= 6 && (pascal_identifier(owner) || camel_identifier(owner)))
}

/// `UserSchema`, `InvoiceRepository`: a type's name, two or more capitalised
/// words run together, unless it is a product's (`GitHub`, `PowerShell`).
fn pascal_identifier(t: &str) -> bool {
    let humps =
        t.chars().zip(t.chars().skip(1)).filter(|(a, b)| a.is_ascii_uppercase() && b.is_ascii_lowercase()).count();
    t.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && t.chars().all(|c| c.is_ascii_alphanumeric())
        && humps >= 2
        && !PRODUCTS.contains(&t.to_ascii_lowercase().as_str())
}

/// `MAX_RETRIES`, `STRIPE_KEY`: a constant, capitals joined by an underscore
/// (`CI`, `HTTP` alone are prose).
fn shouting(t: &str) -> bool {
    t.len() >= 4 && t.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()) && t.contains('_')
}

/// Products people name in capitalised words run together.
const PRODUCTS: &[&str] = &[
    "github",
    "gitlab",
    "bitbucket",
    "javascript",
    "typescript",
    "powershell",
    "postgresql",
    "mysql",
    "youtube",
    "linkedin",
    "wordpress",
    "devops",
    "fastapi",
    "graphql",
    "openai",
    "macos",
    "nodejs",
    "mongodb",
    "dynamodb",
    "cloudflare",
    "cloudwatch",
    "pagerduty",
    "circleci",
    "testflight",
    "vscode",
    "intellij",
    "webstorm",
    "pycharm",
    "rubygems",
    "nextjs",
    "sqlite",
    "openapi",
    "openshift",
    "elasticsearch",
    "rabbitmq",
    "redhat",
    "sourcegraph",
    "clickhouse",
    "cockroachdb",
    "digitalocean",
    "hashicorp",
    "jetbrains",
    "kubectl",
    "lambdatest",
    "netlify",
    "sharepoint",
    "onedrive",
    "dropbox",
    "whatsapp",
    "microsoft",
    "applescript",
    "coffeescript",
    "actionscript",
];

/// The request with each object replaced by the word for its kind;
/// borrowed unchanged when it names none.
#[cfg_attr(not(feature = "semantic"), allow(dead_code))]
pub fn mask_objects(query: &str) -> Cow<'_, str> {
    let mut out = String::with_capacity(query.len());
    let mut changed = false;
    let mut previous: Option<&str> = None;
    let mut rest = query;
    while !rest.is_empty() {
        let start = rest.find(|c: char| !c.is_whitespace()).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        if rest.is_empty() {
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let token = &rest[..end];
        match kind_of(token, previous) {
            Some(kind) => {
                out.push_str(kind);
                changed = true;
            }
            None => out.push_str(token),
        }
        previous = Some(token);
        rest = &rest[end..];
    }
    if changed { Cow::Owned(out) } else { Cow::Borrowed(query) }
}

/// A URL without its scheme: `docs.rs/serde`, `github.com/acme/api/pull/9`,
/// `docs.python.org/3/library/asyncio.html` (a host, dotted, ending in a
/// 2-6 letter top-level label, then a path). A directory is never named
/// like a host, so `src/lib.rs` and `v1.x/notes` are not URLs.
fn bare_url(t: &str) -> bool {
    let Some((host, _)) = t.split_once('/') else { return false };
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        && labels.last().is_some_and(|l| (2..=6).contains(&l.len()) && l.chars().all(|c| c.is_ascii_alphabetic()))
}

/// Whether a token is a URL. A scheme alone (`http://`, as in "replace
/// http:// with https://") is text being edited, not an address.
pub(super) fn is_url(t: &str) -> bool {
    let t = t.trim_start_matches(['(', '[', '<', '\'', '"', '`']);
    let addressed = t.split_once("://").is_some_and(|(_, rest)| rest.chars().any(char::is_alphanumeric));
    addressed || t.starts_with("www.") || bare_url(t)
}

/// A GitHub issue or pull request URL (`github.com/OWNER/REPO/pull/N`, `/issues/N`).
pub(super) fn is_github_reference(t: &str) -> bool {
    t.contains("github.com/") && (t.contains("/pull/") || t.contains("/issues/"))
}

/// Whether one whitespace-separated token names a file (see [`names_a_file`]).
pub(super) fn is_file_token(t: &str) -> bool {
    const BARE: &[&str] = &["makefile", "dockerfile", "readme", "license", "justfile", "gemfile", "rakefile"];
    let t = t.trim_matches(|c: char| "()[]<>'\"`,;:!?".contains(c)).trim_end_matches('.');
    if is_url(t) || t.contains('@') {
        return false;
    }
    let last = t.rsplit('/').next().unwrap_or(t);
    if BARE.contains(&last.to_ascii_lowercase().as_str()) {
        return true;
    }
    let Some((stem, ext)) = last.rsplit_once('.') else { return false };
    let ext_ok = (1..=8).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic());
    // `D.C.`, `A.D`, `U.S`: an abbreviation; `foodnetwork.com`: a site
    if (stem.chars().count() == 1 && ext.len() == 1) || HOST_ENDINGS.contains(&ext.to_ascii_lowercase().as_str()) {
        return false;
    }
    // `.env`, `.gitignore`: a dotfile's whole name is its "extension"
    let stem_ok = stem.is_empty() || stem.chars().all(|c| c.is_alphanumeric() || "._-".contains(c));
    ext_ok && stem_ok && (stem.is_empty() || stem.chars().any(|c| c.is_alphanumeric()))
}

/// Endings of a host name, not of a file (`example.com`, `python.org`).
const HOST_ENDINGS: &[&str] = &["com", "org", "net", "io", "dev", "edu", "gov"];

/// `fetchData`, `handleRetry`, `getUserById`: a code identifier in lower
/// camelCase, quoted by name like a snake_case one (its parts, `fetch`,
/// `data`, say nothing about the tool). A word opening in capitals (`MySQL`,
/// `GitHub`, `PowerShell`) is a product name, not an identifier.
pub(super) fn camel_identifier(t: &str) -> bool {
    let c: Vec<char> = t.chars().collect();
    c.first().is_some_and(char::is_ascii_lowercase)
        && c.iter().all(char::is_ascii_alphanumeric)
        && (1..c.len().saturating_sub(1))
            .any(|i| c[i].is_ascii_uppercase() && c[i - 1].is_ascii_lowercase() && c[i + 1].is_ascii_lowercase())
}

/// `parse_args`, `DATABASE_URL`: word characters with an underscore between two
/// of them (a leading or trailing underscore alone, as in `_private`, is not enough).
pub(super) fn snake_identifier(t: &str) -> bool {
    let c: Vec<char> = t.chars().collect();
    c.iter().all(|&x| x.is_alphanumeric() || x == '_')
        && (1..c.len().saturating_sub(1))
            .any(|i| c[i] == '_' && c[i - 1].is_alphanumeric() && c[i + 1].is_alphanumeric())
}

#[cfg(test)]
#[path = "objects_tests.rs"]
mod tests;
