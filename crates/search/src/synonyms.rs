//! Generic English / software vocabulary: synonym groups, abbreviations and
//! phrase abbreviations. Nothing here is specific to one tool catalog: a rule
//! stays only if it is general usage. Rules that mirrored azure-mcp's wording
//! (quota = usage, status = health, assess = evaluate, embedding = vector,
//! iac / rbac / cicd, `transcribe` as an abbreviation of speech-to-text, and
//! sample / append / lock / unlock as action verbs) were pruned;
//! bench/search/README.md lists what each cost. "Best practice" ~
//! recommendation stays: it is ordinary usage, and pruning it cost azure two
//! queries with nothing gained elsewhere.
//!
//! All lookups work on stemmed words; [`Thesaurus::new`] stems the tables once.

use std::collections::HashMap;

use super::tokenize::WordStemmer;

/// Groups of words that are used interchangeably in requests for tools.
/// Every member expands to every other member of every group it is in.
const GROUPS: &[&[&str]] = &[
    // actions
    &["list", "enumerate", "show", "display", "view", "browse", "inventory"],
    &["get", "retrieve", "fetch", "show", "read", "obtain", "describe", "detail", "view", "lookup", "inspect"],
    &["create", "add", "new", "make", "provision", "generate", "insert", "register"],
    &["delete", "remove", "destroy", "drop", "erase", "purge", "unregister"],
    &["update", "modify", "change", "edit", "set", "alter", "patch", "configure"],
    &["search", "find", "query", "lookup", "look", "locate"],
    &["run", "execute", "invoke", "trigger", "launch", "start"],
    &["stop", "cancel", "terminate", "kill", "halt", "abort"],
    &["pause", "suspend", "hold"],
    &["resume", "unpause"],
    &["send", "post", "publish", "emit", "dispatch", "deliver"],
    &["upload", "import"],
    &["download", "export"],
    &["check", "verify", "validate"],
    &["analyze", "diagnose", "troubleshoot", "debug", "investigate"],
    &["recommend", "recommendation", "suggest", "suggestion", "advice", "advise", "guidance", "guideline", "practice"],
    &["copy", "clone", "duplicate"],
    &["compare", "diff", "difference"],
    &["convert", "transform"],
    &["write", "save", "store"],
    &["connect", "attach", "link"],
    &["scale", "resize"],
    &["monitor", "watch", "observe", "track"],
    &["summarize", "summary", "tldr"],
    &["calculate", "compute"],
    &["navigate", "visit", "goto"],
    &["click", "press", "tap"],
    &["screenshot", "snapshot", "capture"],
    &["transcribe", "transcription", "recognize", "recognition"],
    &["synthesize", "synthesis"],
    // things
    &["db", "database"],
    &["repo", "repository"],
    &["k8s", "kubernetes"],
    &["config", "configuration", "setting", "settings"],
    &["env", "environment"],
    &["auth", "authentication", "authorization", "login", "signin"],
    &["msg", "message"],
    &["doc", "document"],
    &["docs", "documentation"],
    &["dir", "directory", "folder"],
    &["img", "image", "picture", "photo"],
    &["info", "information", "detail"],
    &["stats", "statistics", "stat"],
    &["param", "parameter", "argument", "arg"],
    &["perm", "permission", "access"],
    &["org", "organization", "organisation"],
    &["app", "application"],
    &["pkg", "package"],
    &["dep", "dependency"],
    &["ver", "version", "release"],
    &["desc", "description"],
    &["id", "identifier"],
    &["url", "uri", "link"],
    &["cred", "credential"],
    &["pwd", "password", "passphrase"],
    &["tmp", "temp", "temporary"],
    &["src", "source"],
    &["dest", "destination", "target"],
    &["ref", "reference"],
    &["spec", "specification"],
    &["cert", "certificate"],
    &["acct", "account"],
    &["addr", "address"],
    &["req", "request"],
    &["resp", "response", "reply", "answer"],
    &["err", "error", "failure", "exception"],
    &["fn", "func", "function"],
    &["var", "variable"],
    &["cmd", "command"],
    &["proc", "process"],
    &["svc", "service"],
    &["ns", "namespace"],
    &["eval", "evaluation", "evaluate"],
    &["txn", "transaction"],
    &["email", "mail", "e-mail"],
    &["bug", "issue", "ticket"],
    &["chart", "graph", "plot", "diagram", "visualization"],
    &["audio", "sound"],
    &["voice", "speech"],
    &["price", "cost", "pricing"],
    &["weather", "forecast"],
    &["crypto", "cryptocurrency"],
    &["secret", "password", "credential"],
    &["status", "state"],
    &["alert", "alarm", "notification"],
    &["user", "member"],
    &["schema", "structure", "column"],
    &["region", "location", "zone"],
    &["deploy", "deployment", "rollout"],
    &["commit", "revision", "changeset"],
    &["label", "tag"],
    &["comment", "reply", "note"],
    &["star", "favorite", "bookmark"],
    &["page", "webpage", "website", "site"],
    &["web", "internet", "online"],
    &["news", "headline"],
    &["paper", "article", "publication"],
    &["timezone", "tz"],
    &["rule", "policy"],
    &["instruction", "guide", "tutorial", "howto"],
];

/// Abbreviations that stand for several words (one-way, abbreviation -> words).
const ABBREVIATIONS: &[(&str, &[&str])] = &[
    ("vm", &["virtual", "machine"]),
    ("vms", &["virtual", "machine"]),
    ("pr", &["pull", "request"]),
    ("prs", &["pull", "request"]),
    ("kv", &["key", "value"]),
    ("ai", &["artificial", "intelligence"]),
    ("ml", &["machine", "learning"]),
    ("tts", &["text", "speech"]),
    ("stt", &["speech", "text"]),
    ("ci", &["continuous", "integration"]),
    ("sso", &["single", "sign"]),
    ("os", &["operating", "system"]),
    ("ui", &["user", "interface"]),
    ("cli", &["command", "line"]),
    ("dns", &["domain", "name"]),
    ("llm", &["language", "model"]),
    ("sdk", &["software", "development", "kit"]),
    ("faq", &["question"]),
    ("qa", &["question", "answer"]),
    ("dm", &["direct", "message"]),
    ("2fa", &["two", "factor", "authentication"]),
    ("mfa", &["multi", "factor", "authentication"]),
];

/// Multi-word phrases and the single word they abbreviate (phrase -> word).
/// Phrases are written without stopwords ("text to speech" -> "text speech").
const PHRASES: &[(&[&str], &str)] = &[
    (&["virtual", "machine"], "vm"),
    (&["pull", "request"], "pr"),
    (&["key", "value"], "kv"),
    (&["text", "speech"], "tts"),
    (&["speech", "text"], "stt"),
    (&["command", "line"], "cli"),
    (&["machine", "learning"], "ml"),
    (&["artificial", "intelligence"], "ai"),
    (&["direct", "message"], "dm"),
    (&["e", "mail"], "email"),
];

/// Classes of actions a tool performs. A request whose verb is in one class
/// is unlikely to want a tool whose name verb is only in another.
const ACTIONS: &[&[&str]] = &[
    // read
    &[
        "list",
        "get",
        "show",
        "display",
        "view",
        "browse",
        "enumerate",
        "retrieve",
        "fetch",
        "read",
        "describe",
        "detail",
        "details",
        "inspect",
        "lookup",
        "query",
        "search",
        "find",
        "check",
        "what",
        "which",
        "whats",
        "how",
        "where",
        "who",
        "info",
        "see",
        "print",
        "report",
        "count",
        "download",
        "export",
        "monitor",
        "analyze",
        "diagnose",
        "summarize",
        "recognize",
    ],
    // create
    &[
        "create",
        "add",
        "new",
        "make",
        "provision",
        "generate",
        "insert",
        "register",
        "import",
        "upload",
        "issue",
        "build",
        "deploy",
        "clone",
        "copy",
    ],
    // delete
    &["delete", "remove", "destroy", "drop", "erase", "purge", "unregister", "clear"],
    // update
    &["update", "modify", "change", "edit", "set", "alter", "patch", "configure", "rename", "scale", "assign", "move"],
    // run (resuming something paused starts it again)
    &["run", "execute", "exec", "invoke", "trigger", "launch", "start", "restart", "resume", "unpause"],
    // stop (pausing stops something for now)
    &["stop", "cancel", "terminate", "kill", "halt", "abort", "pause", "suspend"],
    // send
    &["send", "post", "publish", "emit", "dispatch", "notify", "reply"],
];

/// Stemmed synonym tables.
#[derive(Debug, Default)]
pub struct Thesaurus {
    /// stemmed word -> stemmed single-word synonyms (sorted, deduplicated)
    synonyms: HashMap<String, Vec<String>>,
    /// stemmed abbreviation -> stemmed words it stands for
    expansions: HashMap<String, Vec<String>>,
    /// stemmed phrases -> stemmed abbreviation
    phrases: Vec<(Vec<String>, String)>,
    /// stemmed verb -> bitmask of action classes
    actions: HashMap<String, u8>,
}

impl Thesaurus {
    pub fn new(stemmer: &WordStemmer) -> Thesaurus {
        let mut synonyms: HashMap<String, Vec<String>> = HashMap::new();
        for group in GROUPS {
            let stems: Vec<String> = group.iter().map(|w| stemmer.stem(w)).collect();
            for s in &stems {
                let entry = synonyms.entry(s.clone()).or_default();
                for o in &stems {
                    if o != s {
                        entry.push(o.clone());
                    }
                }
            }
        }
        for list in synonyms.values_mut() {
            list.sort();
            list.dedup();
        }
        let mut expansions = HashMap::new();
        for (abbr, words) in ABBREVIATIONS {
            expansions.insert(stemmer.stem(abbr), words.iter().map(|w| stemmer.stem(w)).collect());
        }
        let phrases = PHRASES
            .iter()
            .map(|(ws, abbr)| (ws.iter().map(|w| stemmer.stem(w)).collect(), stemmer.stem(abbr)))
            .collect();
        let mut actions: HashMap<String, u8> = HashMap::new();
        for (i, class) in ACTIONS.iter().enumerate() {
            for w in *class {
                *actions.entry(stemmer.stem(w)).or_insert(0) |= 1 << i;
            }
        }
        Thesaurus { synonyms, expansions, phrases, actions }
    }

    /// Single-word synonyms of a stemmed word.
    pub fn synonyms(&self, stem: &str) -> &[String] {
        self.synonyms.get(stem).map_or(&[], Vec::as_slice)
    }

    /// Action classes (bitmask) of a stemmed word; 0 if it is no action.
    pub fn action(&self, stem: &str) -> u8 {
        self.actions.get(stem).copied().unwrap_or(0)
    }

    /// Words a stemmed abbreviation stands for.
    pub fn expansion(&self, stem: &str) -> &[String] {
        self.expansions.get(stem).map_or(&[], Vec::as_slice)
    }

    /// Abbreviations whose phrase starts at `words[0]`, with the phrase length.
    pub fn phrases_at<'a>(&'a self, words: &'a [String]) -> impl Iterator<Item = (&'a str, usize)> + 'a {
        self.phrases.iter().filter_map(move |(ws, abbr)| {
            (words.len() >= ws.len() && ws.iter().zip(words).all(|(a, b)| a == b)).then_some((abbr.as_str(), ws.len()))
        })
    }
}

#[cfg(test)]
#[path = "synonyms_tests.rs"]
mod tests;
