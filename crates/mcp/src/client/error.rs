//! Why a downstream server could not answer. The texts are what the model
//! reads (each names the server, and says what to do where there is
//! something to do); callers that only pass the text on use `to_string()`.

/// A [`ServerHandle`](super::ServerHandle) call's failure. `stderr` fields
/// hold the tail of the process's stderr as [`super::stderr::describe`]
/// words it (empty, or a newline, a heading and the last lines).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    /// `config` is the file that defines the server.
    #[error("MCP server `{server}` is disabled in {config} (`enabled = false`)")]
    Disabled { server: String, config: String },
    /// A project's server the command gate has not passed in this process.
    #[error("MCP server `{server}` ({config}) has not been allowed to start in this session")]
    NotAllowed { server: String, config: String },
    /// Too many failed starts in a row: nothing is started until the wait is over.
    #[error(
        "MCP server `{server}` failed {failures} times in a row; quiver waits {wait_ms} ms more before restarting \
         it (restart backoff). Last failure: {last}"
    )]
    Backoff { server: String, failures: u32, wait_ms: u128, last: String },
    #[error("MCP server `{server}` failed to start: {detail}{stderr}")]
    StartFailed { server: String, detail: String, stderr: String },
    #[error("MCP server `{server}` did not finish starting within {ms} ms (startup_timeout_ms in {config}){stderr}")]
    StartTimedOut { server: String, ms: u128, config: String, stderr: String },
    /// The process went away; `during` says when (`while running `tool``).
    #[error("MCP server `{server}` exited {during}; the next call restarts it.{stderr}")]
    Exited { server: String, during: String, stderr: String },
    /// A call ran out of time but the server answered a ping: the tool may be slow.
    #[error(
        "MCP server `{server}` did not answer `{tool}` within {ms} ms (tool_timeout_ms in {config}); the call was \
         cancelled. The server is still responsive; the tool may just need longer."
    )]
    CallTimedOut { server: String, tool: String, ms: u128, config: String },
    /// A call ran out of time and the server did not answer a ping either: it was stopped.
    #[error(
        "MCP server `{server}` did not answer `{tool}` within {ms} ms (tool_timeout_ms in {config}); the call was \
         cancelled. The server did not answer a ping either, so it was stopped; the next call restarts it.{stderr}"
    )]
    Hung { server: String, tool: String, ms: u128, config: String, stderr: String },
    #[error("MCP server `{server}` answered `{tool}` with a multi-round or task result, which quiver does not drive")]
    NotComplete { server: String, tool: String },
    /// A JSON-RPC error answer to the call.
    #[error("MCP server `{server}` rejected the call to `{tool}`: {message}")]
    Rejected { server: String, tool: String, message: String },
    #[error("MCP server `{server}` gave no usable answer to `{tool}`: {detail}")]
    Unusable { server: String, tool: String, detail: String },
    #[error("MCP server `{server}` did not answer tools/list in time")]
    ListTimedOut { server: String },
    /// A re-list after `list_changed` failed; the text says how.
    #[error("{0}")]
    ListFailed(String),
    #[error("MCP server `{server}` refused logging/setLevel: {detail}")]
    SetLevelRefused { server: String, detail: String },
    #[error("MCP server `{server}` did not answer logging/setLevel within {secs} s")]
    SetLevelTimedOut { server: String, secs: u64 },
}

#[cfg(test)]
mod tests {
    use super::ServerError;

    /// The texts read as they did when they were built with `format!`: tests
    /// elsewhere search them and the model acts on them.
    #[test]
    fn the_texts_are_unchanged() {
        let s = || "fs".to_string();
        let cases = [
            (
                ServerError::Backoff { server: s(), failures: 2, wait_ms: 300, last: "boom".into() },
                "MCP server `fs` failed 2 times in a row; quiver waits 300 ms more before restarting it (restart \
                 backoff). Last failure: boom",
            ),
            (
                ServerError::StartTimedOut { server: s(), ms: 500, config: "/c.toml".into(), stderr: String::new() },
                "MCP server `fs` did not finish starting within 500 ms (startup_timeout_ms in /c.toml)",
            ),
            (
                ServerError::Exited { server: s(), during: "while running `x`".into(), stderr: "\nlast:\nE".into() },
                "MCP server `fs` exited while running `x`; the next call restarts it.\nlast:\nE",
            ),
            (
                ServerError::CallTimedOut { server: s(), tool: "x".into(), ms: 10, config: "/c.toml".into() },
                "MCP server `fs` did not answer `x` within 10 ms (tool_timeout_ms in /c.toml); the call was \
                 cancelled. The server is still responsive; the tool may just need longer.",
            ),
            (
                ServerError::Hung {
                    server: s(),
                    tool: "x".into(),
                    ms: 10,
                    config: "/c.toml".into(),
                    stderr: String::new(),
                },
                "MCP server `fs` did not answer `x` within 10 ms (tool_timeout_ms in /c.toml); the call was \
                 cancelled. The server did not answer a ping either, so it was stopped; the next call restarts it.",
            ),
            (
                ServerError::NotComplete { server: s(), tool: "x".into() },
                "MCP server `fs` answered `x` with a multi-round or task result, which quiver does not drive",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
