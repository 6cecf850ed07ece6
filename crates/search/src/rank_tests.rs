use super::super::index::{SearchDoc, SearchIndex};
use super::super::params::RankParams;
use super::*;

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc { name: name.into(), description: description.into(), domain: "mcp".into(), ..Default::default() }
}

fn catalog() -> SearchIndex {
    SearchIndex::build(vec![
        doc("keyvault_key_list", "List all keys in a Key Vault."),
        doc("keyvault_key_get", "Get details for a single key in a Key Vault."),
        doc("keyvault_key_create", "Create a new key in a Key Vault."),
        doc("keyvault_key_delete", "Delete a key from a Key Vault."),
        doc("aks_nodepool_get", "Get details of a node pool in a Kubernetes cluster."),
        doc("sql_db_list", "List all databases on a SQL server."),
        doc("postgres_database_list", "Lists all databases in the PostgreSQL server."),
        doc("read_file", "Read a text file from the workspace."),
    ])
}

fn names(idx: &SearchIndex, hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|h| idx.docs()[h.doc].name.clone()).collect()
}

fn top(idx: &SearchIndex, q: &str) -> String {
    let hits = idx.search(q, 5, &|_| true);
    names(idx, &hits).into_iter().next().unwrap_or_default()
}

#[test]
fn plural_object_prefers_list_and_named_item_prefers_get() {
    let idx = catalog();
    assert_eq!(top(&idx, "Show me the keys in the key vault <vault>"), "keyvault_key_list");
    assert_eq!(top(&idx, "Show me the key <key_name> in vault <vault>"), "keyvault_key_get");
}

#[test]
fn synonyms_and_action_classes() {
    let idx = catalog();
    assert_eq!(top(&idx, "remove the key <key> from my vault"), "keyvault_key_delete");
    assert_eq!(top(&idx, "add a new key to vault <vault>"), "keyvault_key_create");
}

#[test]
fn compounds_abbreviations_and_prefixes() {
    let idx = catalog();
    assert_eq!(top(&idx, "show node pool <np> of my k8s cluster"), "aks_nodepool_get");
    assert_eq!(top(&idx, "list dbs in my postgresql server"), "postgres_database_list");
}

#[test]
fn keep_filters_before_limit() {
    let idx = catalog();
    let hits = idx.search("key vault", 1, &|d| d != 0 && d != 1);
    assert_eq!(hits.len(), 1);
    assert!(hits[0].doc >= 2);
    assert!(idx.search("key vault", 5, &|_| false).is_empty());
    assert!(idx.search("key vault", 0, &|_| true).is_empty());
}

#[test]
fn ties_break_by_name_and_results_are_deterministic() {
    let idx = SearchIndex::build(vec![doc("zeta", "same words"), doc("alpha", "same words"), doc("mid", "same words")]);
    let hits = idx.search("same words", 5, &|_| true);
    assert_eq!(names(&idx, &hits), ["alpha", "mid", "zeta"]);
    for _ in 0..5 {
        assert_eq!(idx.search("same words", 5, &|_| true), hits);
    }
}

#[test]
fn mcp_server_name_is_searchable() {
    let idx = SearchIndex::build(vec![
        SearchDoc {
            name: "mcp__weather__get".into(),
            server: Some("weather".into()),
            description: "Get data".into(),
            ..Default::default()
        },
        SearchDoc {
            name: "mcp__stocks__get".into(),
            server: Some("stocks".into()),
            description: "Get data".into(),
            ..Default::default()
        },
    ]);
    assert_eq!(top(&idx, "weather data"), "mcp__weather__get");
}

#[test]
fn regex_search_scores_fields_and_orders_by_name() {
    let idx = catalog();
    let hits = idx.search_regex("^keyvault_key_(get|list)$", 5, &|_| true).unwrap_or_default();
    assert_eq!(names(&idx, &hits), ["keyvault_key_get", "keyvault_key_list"]);
    let hits = idx.search_regex("DATABASES", 5, &|_| true).unwrap_or_default();
    assert_eq!(names(&idx, &hits), ["postgres_database_list", "sql_db_list"]);
    assert!(idx.search_regex("(unclosed", 5, &|_| true).is_err());
    let hits = idx.search_regex("key", 2, &|d| d != 0).unwrap_or_default();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.doc != 0));
}

#[test]
fn params_are_searchable() {
    let mut d = doc("tool_a", "Does a thing.");
    d.params = vec![("timeout_ms".into(), "Timeout in milliseconds".into())];
    let idx = SearchIndex::build(vec![d, doc("tool_b", "Does another thing.")]);
    assert_eq!(top(&idx, "thing with a timeout"), "tool_a");
}

#[test]
fn unknown_words_fall_back_to_shared_prefix() {
    let idx = catalog();
    // "databse" is in no document; it shares "datab" with "databases"
    assert!(!idx.analyze("databse").terms.is_empty());
    assert_eq!(top(&idx, "show the databse list for postgre"), "postgres_database_list");
    // words sharing too little stay unmatched
    assert!(idx.analyze("datum").terms.is_empty());
}

#[test]
fn generic_read_opener_weighs_less_than_the_object() {
    let idx = catalog();
    let plan = idx.analyze("read the text file");
    let id = |w: &str| idx.terms.get(w).copied().unwrap_or(u32::MAX);
    assert!(plan.weight(id("read")) > 0.0 && plan.weight(id("read")) < plan.weight(id("file")));
    // not when the verb is the thing asked about
    let plan = idx.analyze("delete the key");
    assert!(plan.weight(id("delet")) >= plan.weight(id("key")));
}

#[test]
fn verbs_the_description_opens_with_count_as_the_tools_own() {
    // `namespace_update` says it creates too; the create request must not
    // be penalised as if it asked for an update.
    let idx = SearchIndex::build(vec![
        doc("eventhub_namespace_update", "Create or update a namespace. Changes only the given properties."),
        doc("cache_create", "Create a cache in a resource group."),
        doc("vm_create", "Create a virtual machine in a resource group."),
        doc("disk_create", "Create a disk in a resource group."),
        doc("key_get", "Get a key."),
        doc("blob_list", "List blobs."),
    ]);
    assert_eq!(top(&idx, "create a new namespace <ns> in resource group <rg>"), "eventhub_namespace_update");
    assert_eq!(idx.name_action[0], idx.thesaurus.action("creat") | idx.thesaurus.action("updat"));
    // a name without a verb stays without one: no penalty can start applying
    assert_eq!(SearchIndex::build(vec![doc("azqr", "Runs a quick review.")]).name_action[0], 0);
}

#[test]
fn the_means_of_a_request_is_not_its_scope() {
    let idx = SearchIndex::build(vec![
        doc("vm_list", "List virtual machines in a subscription."),
        doc("cli_generate", "Generate CLI commands for a goal."),
        doc("schema_get", "Get the Bicep schema of a resource type."),
        doc("service_create", "Create a service."),
    ]);
    let id = |w: &str| idx.terms.get(w).copied().unwrap_or(u32::MAX);
    let p = RankParams::default();
    let plan = idx.analyze("list virtual machines in my subscription using the cli");
    assert_eq!(plan.weight(id("cli")), p.w_instrument);
    assert_eq!(plan.weight(id("subscript")), p.w_scope);
    // `use X to Y`: X is the means, Y the purpose it serves
    let plan = idx.analyze("how can I use bicep to create a service");
    assert_eq!(plan.weight(id("bicep")), p.w_instrument);
    assert_eq!(plan.weight(id("servic")), p.w_scope);
}

#[test]
fn word_order_counts_across_a_stopword() {
    let idx = SearchIndex::build(vec![
        doc("data_import", "Turns csv into json."),
        doc("data_export", "Turns json into csv."),
    ]);
    assert_eq!(top(&idx, "csv to json"), "data_import");
    assert_eq!(top(&idx, "json to csv"), "data_export");
}

#[test]
fn match_share_counts_words_found_directly_or_through_an_expansion() {
    let idx = catalog();
    let d = |name: &str| idx.docs().iter().position(|x| x.name == name).unwrap();
    // every content word is in the key tools (`remove` through its synonym `delete`)
    let s = idx.match_share("remove a key from the vault", &[d("keyvault_key_delete"), d("read_file")]);
    assert!((s[0] - 1.0).abs() < 1e-6, "{s:?}");
    assert_eq!(s[1], 0.0);
    // a word nothing in the catalog has counts as the rarest, and is missing everywhere
    let s = idx.match_share("rotate the key zyxwvut", &[d("keyvault_key_get")])[0];
    assert!(s > 0.0 && s < 0.5, "{s}");
    assert_eq!(idx.match_share("", &[0]), vec![0.0]);
}

#[test]
fn scores_scale_by_the_match_share() {
    let docs = catalog().docs().to_vec();
    let off = SearchIndex::build_with(docs.clone(), RankParams { share_pow: 0.0, ..RankParams::default() });
    let on = SearchIndex::build_with(docs, RankParams { share_pow: 0.5, ..RankParams::default() });
    let q = "delete the databases of my sql server";
    let plain = off.search(q, 10, &|_| true);
    let scaled = on.search(q, 10, &|_| true);
    assert!(plain.len() >= 3);
    for h in &scaled {
        let base = plain.iter().find(|p| p.doc == h.doc).unwrap();
        let share = on.match_share(q, &[h.doc])[0].max(1e-3);
        assert!((h.score - base.score * share.sqrt()).abs() < 1e-4, "{h:?} {base:?} {share}");
    }
}

#[test]
fn a_url_in_the_request_points_at_the_tool_that_takes_one() {
    let idx = SearchIndex::build(vec![
        doc("fetch_page", "Download a web page by URL and return its text."),
        doc("close_issue", "Close an issue on the tracker."),
        doc("delete_file", "Delete a file that was removed from the docs."),
    ]);
    // the URL's own words point elsewhere (`issues`, `docs`); its kind does not
    assert_eq!(top(&idx, "read https://github.com/acme/app/issues/7 and tell me what it says"), "fetch_page");
    assert_eq!(top(&idx, "summarize www.example.com/docs/changes"), "fetch_page");
    // without the value-kind weight the URL's words win
    let off = SearchIndex::build_with(idx.docs().to_vec(), RankParams { w_value_kind: 0.0, ..RankParams::default() });
    assert_eq!(top(&off, "read https://github.com/acme/app/issues/7 and tell me what it says"), "close_issue");
    // no URL, no extra word; a URL in brackets still counts
    assert!(crate::query::value_kinds("read the issue").is_empty());
    assert_eq!(crate::query::value_kinds("open (https://x.dev) now"), ["url"]);
}

#[test]
fn a_file_name_in_the_request_counts_as_the_word_file() {
    use crate::query::names_a_file;
    for q in
        ["what's inside Cargo.toml?", "show src/lib.rs", "check .env.example", "look at the Makefile", "open `main.go`"]
    {
        assert!(names_a_file(q), "{q}");
    }
    for q in ["bump it to 2.1.0", "mail bob@example.com", "fetch https://x.dev/a.html", "end of sentence.", "run make"]
    {
        assert!(!names_a_file(q), "{q}");
    }
    let docs = vec![doc("read_file", "Read a file with line numbers."), doc("fetch_page", "Download a web page.")];
    let on = SearchIndex::build(docs.clone());
    assert_eq!(top(&on, "Cargo.toml please"), "read_file");
    // the name's own words match nothing; without the kind nothing is found
    let off = SearchIndex::build_with(docs, RankParams { w_file_kind: 0.0, ..RankParams::default() });
    assert!(off.search("Cargo.toml please", 5, &|_| true).is_empty());
}

#[test]
fn a_sibling_that_does_what_the_request_says_outranks_the_familys_other_verbs() {
    let docs = vec![
        doc("automation_create", "Create a scheduled automation: a weekly digest, a nightly report."),
        doc("automation_resume", "Resume a paused automation."),
        doc("cache_delete", "Delete the build cache."),
    ];
    let idx = SearchIndex::build(docs.clone());
    assert_eq!(top(&idx, "unpause the weekly digest"), "automation_resume");
    // the family's create tool is penalised, a tool of another family is not
    assert_ne!(idx.family_action[0] & idx.name_action[1], 0);
    assert_eq!(idx.family_action[2], idx.name_action[2]);
    let off = SearchIndex::build_with(docs, RankParams { sibling_penalty: 1.0, ..RankParams::default() });
    assert_eq!(top(&off, "unpause the weekly digest"), "automation_create");
}
