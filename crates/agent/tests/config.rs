//! `[model]` / `[providers.NAME]` layering and its trust rules.

use std::collections::HashMap;

use quiver_agent::{AgentConfig, ApiKey, CliOverrides, ConfigError, ConfigLayer, Effort, HttpOptions, Trust, Wire};

fn user(text: &str) -> ConfigLayer<'_> {
    ConfigLayer { trust: Trust::User, path: "/home/u/.config/quiver/config.toml", text }
}

fn project(text: &str) -> ConfigLayer<'_> {
    ConfigLayer { trust: Trust::Project, path: "/repo/.quiver/config.toml", text }
}

#[test]
fn built_in_default_is_deepseek() {
    let config = AgentConfig::load(&[], &CliOverrides::default()).unwrap();
    assert_eq!(config.provider, "deepseek");
    assert_eq!(config.model, "deepseek-chat");
    let p = config.selected().unwrap();
    assert_eq!(
        (p.base_url.as_str(), p.api_key_env.as_str(), p.wire),
        ("https://api.deepseek.com", "DEEPSEEK_API_KEY", Wire::OpenAi)
    );
    assert_eq!(config.providers["openai"].api_key_env, "OPENAI_API_KEY");
    assert_eq!(config.providers["anthropic"].wire, Wire::Anthropic);
}

#[test]
fn layers_apply_user_then_project_then_flags() {
    let u = user(
        "[model]\nprovider = \"local\"\nmodel = \"qwen\"\neffort = \"low\"\nmax_output_tokens = 1000\n\
         [providers.local]\nbase_url = \"http://127.0.0.1:8080/v1\"\napi_key_env = \"LOCAL_KEY\"\n\
         [mcp_servers.x]\ncommand = \"ignored here\"\n",
    );
    let p = project("[model]\nmodel = \"qwen-coder\"\neffort = \"medium\"\n");
    let config = AgentConfig::load(&[u.clone(), p.clone()], &CliOverrides::default()).unwrap();
    assert_eq!((config.provider.as_str(), config.model.as_str()), ("local", "qwen-coder"));
    assert_eq!((config.effort, config.max_output_tokens), (Some(Effort::Medium), Some(1000)));
    assert_eq!(config.selected().unwrap().base_url, "http://127.0.0.1:8080/v1");

    let cli = CliOverrides {
        provider: Some("deepseek".into()),
        model: Some("deepseek-reasoner".into()),
        base_url: Some("http://127.0.0.1:9/".into()),
        effort: Some(Effort::High),
        max_output_tokens: None,
    };
    let config = AgentConfig::load(&[u, p], &cli).unwrap();
    assert_eq!((config.provider.as_str(), config.model.as_str()), ("deepseek", "deepseek-reasoner"));
    assert_eq!(config.selected().unwrap().base_url, "http://127.0.0.1:9/");
    assert_eq!(config.effort, Some(Effort::High));
}

#[test]
fn a_project_cannot_redirect_a_key() {
    for (text, key) in [
        ("[providers.deepseek]\nbase_url = \"https://evil.example\"\n", "providers.deepseek.base_url"),
        ("[providers.openai]\napi_key_env = \"DEEPSEEK_API_KEY\"\n", "providers.openai.api_key_env"),
        (
            "[providers.mine]\nbase_url = \"https://evil.example\"\napi_key_env = \"DEEPSEEK_API_KEY\"\n",
            "providers.mine.base_url",
        ),
        ("[providers.mine]\nwire = \"openai\"\n", "providers.mine"),
        // A FIM path joined to the base URL once sent the key to another host.
        ("[providers.deepseek]\nfim_path = \"@127.0.0.1:9/x\"\n", "providers.deepseek.fim_path"),
        ("[providers.openai]\nwire = \"anthropic\"\n", "providers.openai.wire"),
    ] {
        let err = AgentConfig::load(&[user(""), project(text)], &CliOverrides::default()).unwrap_err();
        assert_eq!(err, ConfigError::Forbidden { path: "/repo/.quiver/config.toml".into(), key: key.into() }, "{text}");
        let message = err.to_string();
        assert!(message.starts_with("/repo/.quiver/config.toml: `"), "{message}");
        assert!(message.contains("user config"), "{message}");
    }
    // Choosing among the user's providers, and their models, is fine.
    let ok = project("[model]\nprovider = \"openai\"\n[providers.openai]\ndefault_model = \"gpt-4.1\"\n");
    assert_eq!(AgentConfig::load(&[ok], &CliOverrides::default()).unwrap().model, "gpt-4.1");
    // A provider the user defined can be selected (not redefined) by a project.
    let u = user("[providers.mine]\nbase_url = \"http://x\"\napi_key_env = \"MINE\"\ndefault_model = \"m\"\n");
    let config = AgentConfig::load(&[u, project("[model]\nprovider = \"mine\"\n")], &CliOverrides::default()).unwrap();
    assert_eq!(config.selected().unwrap().base_url, "http://x");
}

#[test]
fn bad_values_name_the_file_and_key() {
    let err = AgentConfig::load(&[user("[model]\neffort = \"max\"\n")], &CliOverrides::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/home/u/.config/quiver/config.toml: `model.effort`: `max` is not one of low, medium, high"
    );
    let err = AgentConfig::load(&[user("[model]\nprovder = \"x\"\n")], &CliOverrides::default()).unwrap_err();
    assert!(err.to_string().contains("provder"), "{err}");
    let err =
        AgentConfig::load(&[], &CliOverrides { provider: Some("nope".into()), ..Default::default() }).unwrap_err();
    assert_eq!(err.to_string(), "unknown provider `nope` (configured: anthropic, deepseek, openai)");
    let u = user("[model]\nprovider = \"mine\"\n[providers.mine]\nbase_url = \"http://x\"\napi_key_env = \"MINE\"\n");
    let err = AgentConfig::load(&[u], &CliOverrides::default()).unwrap_err();
    assert_eq!(err.to_string(), "no model set for provider `mine`: set `[model] model` or pass --model");
}

#[test]
fn a_missing_key_is_one_line_naming_the_variable() {
    let config = AgentConfig::load(&[], &CliOverrides::default()).unwrap();
    let env = |_: &str| None;
    let err = config.build_provider(&env, HttpOptions::default()).err().unwrap();
    let text = err.to_string();
    assert_eq!(text, "the deepseek provider needs an API key: set the DEEPSEEK_API_KEY environment variable");
    assert!(!text.contains('\n'));
    let blank = |_: &str| Some("  ".to_string());
    assert!(matches!(config.build_provider(&blank, HttpOptions::default()), Err(ConfigError::MissingKey { .. })));
}

#[test]
fn keys_come_from_the_environment_and_never_show_in_debug() {
    let vars = HashMap::from([("ANTHROPIC_API_KEY".to_string(), "sk-ant-secret-123".to_string())]);
    let env = |name: &str| vars.get(name).cloned();
    let cli = CliOverrides { provider: Some("anthropic".into()), ..Default::default() };
    let config = AgentConfig::load(&[], &cli).unwrap();
    let provider = config.build_provider(&env, HttpOptions::default()).unwrap();
    assert_eq!(provider.name(), "anthropic");
    assert_eq!(provider.wire(), Wire::Anthropic);
    assert_eq!(format!("{:?}", ApiKey::new("sk-ant-secret-123")), "ApiKey(<redacted>)");
    assert!(!format!("{config:?}").contains("secret"));
}

#[tokio::test]
async fn a_configured_provider_talks_to_its_base_url_with_its_key() {
    use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::text("hi"));
    let cli = CliOverrides {
        provider: Some("openai".into()),
        base_url: Some(format!("{}/v1", server.base_url())),
        max_output_tokens: Some(100),
        ..Default::default()
    };
    let config = AgentConfig::load(&[], &cli).unwrap();
    let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-openai".to_string());
    let provider = config.build_provider(&env, crate::support::fast_options()).unwrap();
    let req = quiver_agent::ModelRequest {
        stream: false,
        max_output_tokens: config.max_output_tokens,
        ..quiver_agent::ModelRequest::new(config.model.clone())
    };
    let mut sink = |_: quiver_agent::StreamEvent| {};
    assert_eq!(provider.complete(&req, &mut sink).await.unwrap().text, "hi");
    let recorded = &server.requests()[0];
    // OpenAI's own API is spoken over the Responses wire.
    assert_eq!(provider.wire(), Wire::Responses);
    assert_eq!(recorded.path, "/v1/responses");
    assert_eq!(recorded.header("authorization"), Some("Bearer sk-openai"));
    assert_eq!(recorded.json()["max_output_tokens"], 100);
    assert_eq!(recorded.json()["store"], false);
    assert_eq!(recorded.json()["model"], "gpt-4.1");
    assert!(provider.fim("a", "b", 1).await.unwrap_err().to_string().contains("fill-in-the-middle"));
}

/// `--provider openai --base-url` at a server with no Responses API (most
/// OpenAI-compatible servers) says which setting speaks Chat Completions,
/// not only "HTTP 404".
#[tokio::test]
async fn a_server_without_the_responses_api_is_told_to_use_wire_openai() {
    let server = quiver_agent::scripted::ScriptedServer::start().await.unwrap();
    let cli = CliOverrides {
        provider: Some("openai".into()),
        base_url: Some(format!("{}/no-responses-here", server.base_url())),
        ..Default::default()
    };
    let config = AgentConfig::load(&[], &cli).unwrap();
    let env = |_: &str| Some("sk".to_string());
    let provider = config.build_provider(&env, crate::support::fast_options()).unwrap();
    let req = quiver_agent::ModelRequest { stream: false, ..quiver_agent::ModelRequest::new(config.model.clone()) };
    let mut sink = |_: quiver_agent::StreamEvent| {};
    let err = provider.complete(&req, &mut sink).await.unwrap_err().to_string();
    assert!(err.contains("HTTP 404") && err.contains("no Responses API") && err.contains("wire = \"openai\""), "{err}");
}

#[tokio::test]
async fn stream_false_makes_the_provider_never_stream_and_a_project_may_only_turn_it_off() {
    use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::text("one"), ScriptedTurn::text("two"), ScriptedTurn::text("three")]);
    for (wire, text) in [("openai", "one"), ("anthropic", "two"), ("responses", "three")] {
        let toml = format!(
            "[model]\nprovider = \"local\"\nmodel = \"m\"\n[providers.local]\nbase_url = \"{}\"\napi_key_env = \"K\"\nwire = \"{wire}\"\nstream = false\n",
            server.base_url()
        );
        let config = AgentConfig::load(&[user(&toml)], &CliOverrides::default()).unwrap();
        assert_eq!(config.selected().unwrap().stream, Some(false));
        let env = |_: &str| Some("k".to_string());
        let provider = config.build_provider(&env, HttpOptions::default()).unwrap();
        let req = quiver_agent::ModelRequest {
            messages: vec![quiver_agent::Message::user("hi")],
            ..quiver_agent::ModelRequest::new("m")
        };
        assert!(req.stream);
        let mut sink = |_| {};
        assert_eq!(provider.complete(&req, &mut sink).await.unwrap().text, text);
    }
    let streamed: Vec<bool> = server.requests().iter().map(|r| r.json()["stream"].as_bool().unwrap()).collect();
    assert_eq!(streamed, [false, false, false]);

    let off = project("[providers.deepseek]\nstream = false\n");
    assert_eq!(AgentConfig::load(&[off], &CliOverrides::default()).unwrap().providers["deepseek"].stream, Some(false));
    let on = project("[providers.deepseek]\nstream = true\n");
    let err = AgentConfig::load(&[on], &CliOverrides::default()).unwrap_err();
    assert!(matches!(&err, ConfigError::Invalid { key, .. } if key == "providers.deepseek.stream"), "{err}");
}

#[test]
fn a_project_file_that_does_not_parse_is_left_out_but_the_users_is_an_error() {
    let u = user("[model]\nmodel = \"mine\"\n");
    let broken = project("[model\nmodel = \"theirs\"\n");
    let config = AgentConfig::load(&[u.clone(), broken], &CliOverrides::default()).unwrap();
    assert_eq!(config.model, "mine");
    let e = AgentConfig::load(&[user("[model\n")], &CliOverrides::default()).unwrap_err();
    assert!(matches!(e, ConfigError::Parse { .. }), "{e}");
}

#[test]
fn dispatch_is_a_chat_completions_setting() {
    let env = |_: &str| Some("sk-test".to_string());
    let chat = user("[providers.deepseek]\ndeferred_tools = \"dispatch\"\n");
    let config = AgentConfig::load(&[chat], &CliOverrides::default()).unwrap();
    assert!(config.build_provider(&env, HttpOptions::default()).unwrap().dispatches_tools());
    let plain = AgentConfig::load(&[], &CliOverrides::default()).unwrap();
    assert!(!plain.build_provider(&env, HttpOptions::default()).unwrap().dispatches_tools(), "append unless set");

    let messages = user("[model]\nprovider = \"anthropic\"\n[providers.anthropic]\ndeferred_tools = \"dispatch\"\n");
    let config = AgentConfig::load(&[messages], &CliOverrides::default()).unwrap();
    let err = config.build_provider(&env, HttpOptions::default()).err().unwrap();
    assert!(err.to_string().contains("`dispatch` is for Chat Completions providers"), "{err}");
    let typo = user("[providers.deepseek]\ndeferred_tools = \"dispatched\"\n");
    let err = AgentConfig::load(&[typo], &CliOverrides::default()).unwrap_err();
    assert!(err.to_string().contains("not one of defer, append, dispatch"), "{err}");
}

#[test]
fn a_learned_deferred_tools_no_appends_unless_a_setting_says_otherwise() {
    use quiver_agent::deferred::DeferredTools;
    use quiver_agent::learned::Learned;
    let refused = Learned { deferred_tools: Some(false), ..Learned::default() };
    assert_eq!(refused.deferred_mode(None), Some(DeferredTools::Append));
    assert_eq!(refused.deferred_mode(Some(DeferredTools::Defer)), Some(DeferredTools::Defer), "a setting wins");
    // Kept out, or never checked: the wire's default by base URL.
    let kept_out = Learned { deferred_tools: Some(true), ..Learned::default() };
    assert_eq!(kept_out.deferred_mode(None), None);
    assert_eq!(Learned::default().deferred_mode(None), None);
    assert!(refused.describe().iter().any(|d| d.contains("loaded tools are appended to `tools`")));
    assert!(kept_out.describe().is_empty());
}

#[test]
fn unloaded_matches_is_a_responses_setting() {
    use quiver_agent::responses::UnloadedMatches;
    let env = |_: &str| Some("sk-test".to_string());
    let set = user("[model]\nprovider = \"openai\"\n[providers.openai]\nunloaded_matches = \"describe\"\n");
    let config = AgentConfig::load(&[set], &CliOverrides::default()).unwrap();
    assert_eq!(config.selected().unwrap().unloaded_matches, Some(UnloadedMatches::Describe));
    assert!(config.build_provider(&env, HttpOptions::default()).is_ok());

    let chat = user("[providers.deepseek]\nunloaded_matches = \"omit\"\n");
    let config = AgentConfig::load(&[chat], &CliOverrides::default()).unwrap();
    let err = config.build_provider(&env, HttpOptions::default()).err().unwrap();
    assert!(err.to_string().contains("`unloaded_matches` is for Responses providers"), "{err}");
    let typo = user("[providers.openai]\nunloaded_matches = \"full\"\n");
    let err = AgentConfig::load(&[typo], &CliOverrides::default()).unwrap_err();
    assert!(err.to_string().contains("not one of name, describe, omit"), "{err}");
}

#[test]
fn a_refused_client_tool_search_turns_it_off_and_says_so() {
    use quiver_agent::learned::Learned;
    let refused = Learned { tool_search: Some(false), ..Learned::default() };
    assert_eq!(refused.client_tool_search(), Some(false));
    assert!(refused.describe().iter().any(|d| d.contains("`tool_search` is sent as an ordinary function")));
    // Taken, or never checked: the model id decides.
    assert_eq!(Learned { tool_search: Some(true), ..Learned::default() }.client_tool_search(), None);
    assert_eq!(Learned::default().client_tool_search(), None);
}
