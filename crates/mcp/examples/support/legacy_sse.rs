//! A client for the older HTTP+SSE transport (protocol 2024-11-05), which
//! mcp-hub speaks and rmcp 3.9 has no client for.

use std::time::Duration;

use futures::StreamExt;
use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RoleClient, RunningService};

/// Messages from the server arrive on one GET stream, whose first event names
/// the URL to POST client messages to; this is a sink and a stream rmcp can
/// serve over.
pub async fn legacy_sse(
    http: reqwest::Client,
    base: &str,
    path: &str,
) -> anyhow::Result<RunningService<RoleClient, ()>> {
    let mut stream =
        http.get(format!("{base}{path}")).header("accept", "text/event-stream").send().await?.error_for_status()?;
    let (to_client, from_server) = futures::channel::mpsc::unbounded::<ServerJsonRpcMessage>();
    let (endpoint_tx, endpoint_rx) = tokio::sync::oneshot::channel::<String>();
    tokio::spawn(async move {
        let mut endpoint_tx = Some(endpoint_tx);
        let mut buffer = String::new();
        while let Ok(Some(chunk)) = stream.chunk().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find("\n\n") {
                let event: String = buffer.drain(..end + 2).collect();
                let kind = event.lines().find_map(|l| l.strip_prefix("event:")).map(str::trim).unwrap_or("message");
                let data: Vec<&str> =
                    event.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| d.trim_start()).collect();
                let data = data.join("\n");
                if kind == "endpoint" {
                    if let Some(tx) = endpoint_tx.take() {
                        let _ = tx.send(data);
                    }
                } else if let Ok(message) = serde_json::from_str(&data) {
                    let _ = to_client.unbounded_send(message);
                }
            }
        }
    });
    let endpoint = tokio::time::timeout(Duration::from_secs(10), endpoint_rx).await??;
    let post_url = if endpoint.starts_with("http") { endpoint } else { format!("{base}{endpoint}") };
    let (to_server, mut outgoing) = futures::channel::mpsc::unbounded::<ClientJsonRpcMessage>();
    tokio::spawn(async move {
        while let Some(message) = outgoing.next().await {
            // One POST per message, concurrently: the answers come on the stream.
            let (http, url) = (http.clone(), post_url.clone());
            tokio::spawn(async move {
                let body = serde_json::to_string(&message).unwrap_or_default();
                let _ = http.post(&url).header("content-type", "application/json").body(body).send().await;
            });
        }
    });
    Ok(().serve((to_server, from_server)).await?)
}
