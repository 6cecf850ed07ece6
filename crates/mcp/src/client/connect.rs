//! Opening one MCP session to a downstream server: a child process over stdio,
//! or streamable HTTP. Everything rmcp-specific about starting a client lives here.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};

use super::stderr::StderrTail;
use crate::config::{ServerConfig, Transport};

/// quiver's side of one downstream session. It only listens for
/// `tools/list_changed`, which marks the server's list for a refresh.
#[derive(Clone)]
pub(crate) struct ClientState {
    pub tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for ClientState {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("quiver", quiver_engine::VERSION))
            // Session-based handshake: the widest-supported revision.
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }
}

/// A live session. Dropping it ends the session, which kills a stdio server's
/// whole process group.
pub(crate) struct Connection {
    pub service: RunningService<RoleClient, ClientState>,
    pub pid: Option<u32>,
}

impl Connection {
    /// The service loop ended: the process exited, the pipe broke, or the
    /// HTTP session was lost.
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

/// Starts the server and completes the MCP handshake. The caller bounds this
/// with the server's startup timeout. Errors are plain text for the model.
pub(crate) async fn open(
    config: &ServerConfig,
    stderr: &Arc<StderrTail>,
    tools_changed: Arc<AtomicBool>,
) -> Result<Connection, String> {
    let state = ClientState { tools_changed };
    match &config.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let mut cmd = tokio::process::Command::new(command);
            // quiver's own secrets (its listener's token, provider keys, any
            // `*_TOKEN`) are never inherited: a server gets them only when its
            // config names them in `env`, which is set after the scrub. The
            // server itself runs unconfined (`full`): the user configured it,
            // or approved the project's configuration through the command gate.
            quiver_sandbox::EnvPolicy::default().apply_to(&mut cmd);
            cmd.args(args).envs(env);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            let mut wrapped = CommandWrap::from(cmd);
            // Its own process group, so the whole tree (npx → node, a shell
            // wrapper → the real server) dies with the session.
            wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
            let (transport, stderr_pipe) = TokioChildProcess::builder(wrapped)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| format!("could not start `{command}`: {e}"))?;
            let pid = transport.id();
            if let Some(pipe) = stderr_pipe {
                stderr.spawn_reader(config.name.clone(), pipe);
            }
            let service =
                state.serve(transport).await.map_err(|e| format!("the MCP handshake with `{command}` failed: {e}"))?;
            Ok(Connection { service, pid })
        }
        Transport::Http { url, headers, bearer_token_env } => {
            install_crypto_provider();
            let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(var) = bearer_token_env {
                let token = std::env::var(var).map_err(|_| {
                    format!("environment variable `{var}` (bearer_token_env of server `{}`) is not set", config.name)
                })?;
                transport_config = transport_config.auth_header(token);
            }
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = http::HeaderName::try_from(name.as_str()).map_err(|e| format!("header `{name}`: {e}"))?;
                let value = http::HeaderValue::try_from(value.as_str()).map_err(|e| format!("header `{name}`: {e}"))?;
                custom.insert(name, value);
            }
            transport_config = transport_config.custom_headers(custom);
            let transport = StreamableHttpClientTransport::from_config(transport_config);
            let service =
                state.serve(transport).await.map_err(|e| format!("could not open an MCP session at {url}: {e}"))?;
            Ok(Connection { service, pid: None })
        }
        Transport::Unsupported { reason, .. } => Err(reason.clone()),
    }
}

/// reqwest is built without a default TLS crypto provider (the workspace picks
/// `ring` once for everyone); install it unless someone already did.
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing the race to another installer is fine: one provider is set.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
