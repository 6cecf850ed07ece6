//! Which model, through which provider: `[model]` and `[providers.NAME]` tables,
//! layered built-in < user < project < CLI flags.
//!
//! Trust: a provider's `base_url` and `api_key_env` decide where the user's key
//! is sent, so only the user (their own config or a flag they typed) may set
//! them. A project file (it arrives with a cloned repository) that sets either,
//! or defines a provider of its own, is refused with an error naming the file
//! and key: an error rather than a warning, because silently ignoring it would
//! leave a user wondering why the project's setting has no effect, and a
//! hostile repository should be loud, not quiet.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::anthropic::AnthropicProvider;
use crate::deferred::DeferredTools;
use crate::http::HttpOptions;
use crate::message::Effort;
use crate::openai::{OpenAiDialect, OpenAiProvider};
use crate::provider::{ApiKey, Provider, ProviderError, Wire};
use crate::responses::{ResponsesDialect, ResponsesProvider, UnloadedMatches};

pub const DEFAULT_PROVIDER: &str = "deepseek";

#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    pub name: String,
    pub base_url: String,
    pub api_key_env: String,
    pub wire: Wire,
    /// The model used when `[model].model` is not set.
    pub default_model: String,
    /// Relative FIM endpoint, for providers that have one (DeepSeek's beta).
    pub fim_path: Option<String>,
    /// Whether the model is shown tool images (unset: by model id, see `vision`).
    pub vision: Option<bool>,
    /// `false`: never stream (for servers that cannot); unset: stream, and
    /// stop for the session if the server turns out not to manage.
    pub stream: Option<bool>,
    /// `tool_choice` sent with every request that has tools: `auto` or
    /// `required` (unset: none is sent, which the OpenAI and Anthropic specs
    /// treat as `auto`; llama-cpp-python's `chatml-function-calling` instead
    /// ignores the tools unless it gets one).
    pub tool_choice: Option<String>,
    /// `deferred_tools` (Anthropic wire): `defer` (unset) sends every loadable
    /// tool with `defer_loading` and loads by `tool_reference`; `append` adds
    /// loaded tools to `tools`, for Anthropic-compatible servers without it.
    /// On Chat Completions: `append` (unset) or `dispatch` (loaded tools are
    /// called through a `call_tool` head tool, `tools` never changes).
    pub deferred_tools: Option<DeferredTools>,
    /// `unloaded_matches` (Responses wire): what a loading search says beside
    /// its `tool_search_output` about the matches it did not load: `name`
    /// (unset), `describe` (and a one-line description each) or `omit`.
    pub unloaded_matches: Option<UnloadedMatches>,
    /// Longest silence (no byte at all; an SSE comment counts) a stream may
    /// keep before the call times out (unset: [`HttpOptions`]' 120 s). For a
    /// local server that is slow to start an answer and sends no comments.
    pub stream_idle_timeout_secs: Option<u64>,
}

/// The resolved settings: every layer applied.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    pub provider: String,
    pub model: String,
    pub effort: Option<Effort>,
    pub max_output_tokens: Option<u32>,
    pub providers: BTreeMap<String, ProviderConfig>,
}

/// Where a layer's text came from; decides what it may set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    User,
    Project,
}

/// One config file's text, as read by the caller.
#[derive(Debug, Clone)]
pub struct ConfigLayer<'a> {
    pub trust: Trust,
    /// Shown in errors.
    pub path: &'a str,
    pub text: &'a str,
}

/// Flags given on the command line (the user's own, so fully trusted).
#[derive(Debug, Clone, Default)]
pub struct CliOverrides {
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Applies to the selected provider.
    pub base_url: Option<String>,
    pub effort: Option<Effort>,
    pub max_output_tokens: Option<u32>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error(
        "{path}: `{key}` may only be set in your user config or on the command line (a project's config must not decide where your API key is sent)"
    )]
    Forbidden { path: String, key: String },
    #[error("{path}: `{key}`: {message}")]
    Invalid { path: String, key: String, message: String },
    #[error("unknown provider `{name}` (configured: {known})")]
    UnknownProvider { name: String, known: String },
    #[error("no model set for provider `{provider}`: set `[model] model` or pass --model")]
    NoModel { provider: String },
    #[error("the {provider} provider needs an API key: set the {var} environment variable")]
    MissingKey { provider: String, var: String },
    /// The provider client could not be built (its message, which names it).
    #[error("{0}")]
    Provider(String),
}

#[derive(Debug, Default, Deserialize)]
struct FileConfig {
    #[serde(default)]
    model: Option<ModelTable>,
    #[serde(default)]
    providers: BTreeMap<String, ProviderTable>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelTable {
    provider: Option<String>,
    model: Option<String>,
    effort: Option<String>,
    max_output_tokens: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderTable {
    base_url: Option<String>,
    api_key_env: Option<String>,
    wire: Option<String>,
    default_model: Option<String>,
    fim_path: Option<String>,
    vision: Option<bool>,
    stream: Option<bool>,
    tool_choice: Option<String>,
    deferred_tools: Option<String>,
    unloaded_matches: Option<String>,
    stream_idle_timeout_secs: Option<u64>,
}

fn builtin_providers() -> BTreeMap<String, ProviderConfig> {
    let p = |name: &str, url: &str, env: &str, wire, model: &str, fim: Option<&str>| {
        let config = ProviderConfig {
            name: name.into(),
            base_url: url.into(),
            api_key_env: env.into(),
            wire,
            default_model: model.into(),
            fim_path: fim.map(str::to_string),
            vision: None,
            stream: None,
            tool_choice: None,
            deferred_tools: None,
            unloaded_matches: None,
            stream_idle_timeout_secs: None,
        };
        (name.to_string(), config)
    };
    BTreeMap::from([
        p(
            "deepseek",
            "https://api.deepseek.com",
            "DEEPSEEK_API_KEY",
            Wire::OpenAi,
            "deepseek-chat",
            Some("/beta/completions"),
        ),
        // OpenAI's own API speaks Responses: client-executed tool search keeps
        // the prompt cache across loads, and reasoning survives tool turns.
        p("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", Wire::Responses, "gpt-4.1", None),
        p("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", Wire::Anthropic, "claude-sonnet-4-5", None),
    ])
}

impl From<ProviderError> for ConfigError {
    fn from(e: ProviderError) -> Self {
        ConfigError::Provider(e.to_string())
    }
}

impl AgentConfig {
    /// Layers applied in the order given (user before project), then the flags.
    pub fn load(layers: &[ConfigLayer<'_>], cli: &CliOverrides) -> Result<Self, ConfigError> {
        let mut providers = builtin_providers();
        let mut provider = DEFAULT_PROVIDER.to_string();
        let mut model: Option<String> = None;
        let mut effort = None;
        let mut max_output_tokens = None;

        for layer in layers {
            let file: FileConfig = match toml::from_str(layer.text) {
                Ok(file) => file,
                // A cloned repository's unreadable file must not stop the run:
                // it is left out whole, with a warning.
                Err(e) if layer.trust == Trust::Project => {
                    tracing::warn!("ignoring the project's config {}: {}", layer.path, e.message());
                    continue;
                }
                Err(e) => return Err(ConfigError::Parse { path: layer.path.into(), message: e.message().to_string() }),
            };
            for (name, table) in file.providers {
                apply_provider(&mut providers, layer, &name, table)?;
            }
            if let Some(m) = file.model {
                provider = m.provider.unwrap_or(provider);
                model = m.model.or(model);
                if let Some(e) = m.effort {
                    effort = Some(Effort::parse(&e).ok_or_else(|| ConfigError::Invalid {
                        path: layer.path.into(),
                        key: "model.effort".into(),
                        message: format!("`{e}` is not one of low, medium, high"),
                    })?);
                }
                max_output_tokens = m.max_output_tokens.or(max_output_tokens);
            }
        }

        provider = cli.provider.clone().unwrap_or(provider);
        model = cli.model.clone().or(model);
        effort = cli.effort.or(effort);
        max_output_tokens = cli.max_output_tokens.or(max_output_tokens);
        let known = providers.keys().cloned().collect::<Vec<_>>().join(", ");
        let Some(selected) = providers.get_mut(&provider) else {
            return Err(ConfigError::UnknownProvider { name: provider, known });
        };
        if let Some(url) = &cli.base_url {
            selected.base_url = url.clone();
        }
        let model = model.unwrap_or_else(|| selected.default_model.clone());
        if model.trim().is_empty() {
            return Err(ConfigError::NoModel { provider });
        }
        Ok(AgentConfig { provider, model, effort, max_output_tokens, providers })
    }

    pub fn selected(&self) -> Result<&ProviderConfig, ConfigError> {
        self.providers.get(&self.provider).ok_or_else(|| ConfigError::UnknownProvider {
            name: self.provider.clone(),
            known: self.providers.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    }

    /// The selected provider, its key read through `env` (the process
    /// environment in production; a map in tests).
    pub fn build_provider(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        options: HttpOptions,
    ) -> Result<Box<dyn Provider>, ConfigError> {
        let p = self.selected()?;
        if p.deferred_tools == Some(DeferredTools::Dispatch) && p.wire != Wire::OpenAi {
            return Err(ConfigError::Invalid {
                path: format!("[providers.{}]", p.name),
                key: "deferred_tools".into(),
                message: "`dispatch` is for Chat Completions providers (wire = \"openai\"); this wire loads tools without touching `tools`".into(),
            });
        }
        if p.unloaded_matches.is_some() && p.wire != Wire::Responses {
            return Err(ConfigError::Invalid {
                path: format!("[providers.{}]", p.name),
                key: "unloaded_matches".into(),
                message: "`unloaded_matches` is for Responses providers (wire = \"responses\"), whose searches load through `tool_search_output`".into(),
            });
        }
        let key = env(&p.api_key_env)
            .filter(|k| !k.trim().is_empty())
            .ok_or_else(|| ConfigError::MissingKey { provider: p.name.clone(), var: p.api_key_env.clone() })?;
        let key = ApiKey::new(key.trim());
        let options = match p.stream_idle_timeout_secs {
            Some(secs) => HttpOptions { idle_timeout: Duration::from_secs(secs), ..options },
            None => options,
        };
        // What `quiver providers check` found for this base URL and model.
        let learned = crate::learned::learned_for(&p.base_url, &self.model, p.tool_choice.as_deref());
        if learned != crate::learned::Learned::default() {
            tracing::info!(provider = %p.name, ?learned, "using what `quiver providers check` found");
        }
        // A refused image is learned as `vision: false`; a setting wins.
        let vision = p.vision.or(learned.vision);
        Ok(match p.wire {
            Wire::OpenAi => {
                let dialect = OpenAiDialect {
                    max_completion_tokens: p.name == "openai",
                    fim_path: p.fim_path.clone(),
                    fim_model: p.fim_path.as_ref().map(|_| fim_model(&self.model)),
                    vision,
                    tool_choice: p.tool_choice.clone(),
                };
                Box::new(
                    OpenAiProvider::new(&p.name, &p.base_url, key, dialect, options)?
                        .with_deferred_tools(p.deferred_tools)
                        .with_streaming(p.stream)
                        .with_learned(&learned),
                )
            }
            Wire::Responses => {
                let dialect = ResponsesDialect {
                    vision,
                    tool_choice: p.tool_choice.clone(),
                    client_tool_search: learned.client_tool_search(),
                    unloaded_matches: p.unloaded_matches.unwrap_or_default(),
                };
                Box::new(ResponsesProvider::new(&p.name, &p.base_url, key, dialect, options)?.with_streaming(p.stream))
            }
            Wire::Anthropic => Box::new(
                AnthropicProvider::new(&p.name, &p.base_url, key, options)?
                    .with_vision(vision)
                    .with_tool_choice(p.tool_choice.clone())
                    .with_deferred_tools(learned.deferred_mode(p.deferred_tools))
                    .with_streaming(p.stream)
                    .with_learned(&learned),
            ),
        })
    }
}

/// The model a FIM request names. DeepSeek's FIM endpoint has no thinking
/// mode: `deepseek-reasoner` is the thinking mode of `deepseek-chat`, so FIM
/// goes to the latter; every other model is sent as configured.
fn fim_model(model: &str) -> String {
    match model {
        "deepseek-reasoner" => "deepseek-chat".to_string(),
        other => other.to_string(),
    }
}

fn apply_provider(
    providers: &mut BTreeMap<String, ProviderConfig>,
    layer: &ConfigLayer<'_>,
    name: &str,
    table: ProviderTable,
) -> Result<(), ConfigError> {
    let key = |field: &str| format!("providers.{name}.{field}");
    if layer.trust == Trust::Project {
        if table.base_url.is_some() {
            return Err(ConfigError::Forbidden { path: layer.path.into(), key: key("base_url") });
        }
        if table.api_key_env.is_some() {
            return Err(ConfigError::Forbidden { path: layer.path.into(), key: key("api_key_env") });
        }
        if !providers.contains_key(name) {
            return Err(ConfigError::Forbidden { path: layer.path.into(), key: format!("providers.{name}") });
        }
        // Both decide where a request carrying the key goes: `fim_path` is
        // joined to the base URL (`@host/x` once sent the key elsewhere) and
        // `wire` picks the protocol and with it the paths and headers.
        if table.fim_path.is_some() {
            return Err(ConfigError::Forbidden { path: layer.path.into(), key: key("fim_path") });
        }
        if table.wire.is_some() {
            return Err(ConfigError::Forbidden { path: layer.path.into(), key: key("wire") });
        }
        // A project may only restrict: it can turn streaming off, not on.
        if table.stream == Some(true) {
            return Err(ConfigError::Invalid {
                path: layer.path.into(),
                key: key("stream"),
                message: "a project's config may only turn streaming off (`stream = false`)".into(),
            });
        }
    }
    let wire = match &table.wire {
        None => None,
        Some(w) => Some(Wire::parse(w).ok_or_else(|| ConfigError::Invalid {
            path: layer.path.into(),
            key: key("wire"),
            message: format!("`{w}` is not one of openai, anthropic, responses"),
        })?),
    };
    let entry = match providers.get_mut(name) {
        Some(existing) => existing,
        None => {
            let (Some(base_url), Some(api_key_env)) = (&table.base_url, &table.api_key_env) else {
                return Err(ConfigError::Invalid {
                    path: layer.path.into(),
                    key: format!("providers.{name}"),
                    message: "a new provider needs both `base_url` and `api_key_env`".into(),
                });
            };
            providers.entry(name.to_string()).or_insert(ProviderConfig {
                name: name.into(),
                base_url: base_url.clone(),
                api_key_env: api_key_env.clone(),
                wire: Wire::OpenAi,
                default_model: String::new(),
                fim_path: None,
                vision: None,
                stream: None,
                tool_choice: None,
                deferred_tools: None,
                unloaded_matches: None,
                stream_idle_timeout_secs: None,
            })
        }
    };
    if let Some(url) = table.base_url {
        entry.base_url = url;
    }
    if let Some(var) = table.api_key_env {
        entry.api_key_env = var;
    }
    if let Some(wire) = wire {
        entry.wire = wire;
    }
    if let Some(model) = table.default_model {
        entry.default_model = model;
    }
    if let Some(path) = table.fim_path {
        entry.fim_path = Some(path);
    }
    if let Some(vision) = table.vision {
        entry.vision = Some(vision);
    }
    if let Some(stream) = table.stream {
        entry.stream = Some(stream);
    }
    if let Some(choice) = table.tool_choice {
        if !["auto", "required"].contains(&choice.as_str()) {
            return Err(ConfigError::Invalid {
                path: layer.path.into(),
                key: key("tool_choice"),
                message: format!("`{choice}` is not one of auto, required"),
            });
        }
        entry.tool_choice = Some(choice);
    }
    if let Some(mode) = table.deferred_tools {
        let parsed = DeferredTools::parse(&mode).ok_or_else(|| ConfigError::Invalid {
            path: layer.path.into(),
            key: key("deferred_tools"),
            message: format!("`{mode}` is not one of defer, append, dispatch"),
        })?;
        entry.deferred_tools = Some(parsed);
    }
    // A project may set it too: it decides only how long quiver waits.
    if let Some(secs) = table.stream_idle_timeout_secs {
        if secs == 0 {
            return Err(ConfigError::Invalid {
                path: layer.path.into(),
                key: key("stream_idle_timeout_secs"),
                message: "must be at least 1 (seconds of silence before a stream times out)".into(),
            });
        }
        entry.stream_idle_timeout_secs = Some(secs);
    }
    if let Some(mode) = table.unloaded_matches {
        let parsed = UnloadedMatches::parse(&mode).ok_or_else(|| ConfigError::Invalid {
            path: layer.path.into(),
            key: key("unloaded_matches"),
            message: format!("`{mode}` is not one of name, describe, omit"),
        })?;
        entry.unloaded_matches = Some(parsed);
    }
    Ok(())
}
