//! What every HTTP client of quiver-mcp needs (the MCP transport and the OAuth
//! flow alike): the TLS crypto provider, and `TCP_NODELAY`.

/// reqwest is built without a default TLS crypto provider (the workspace picks
/// `ring` once for everyone); install it unless someone already did.
pub(crate) fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing the race to another installer is fine: one provider is set.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A reqwest client builder for quiver-mcp's own requests, with the crypto
/// provider installed and `TCP_NODELAY` on: small JSON-RPC messages must not
/// wait for the peer's delayed ACK (Nagle's algorithm cost the gateway 44 ms a
/// call on its accepted side). reqwest 0.13 defaults to it; saying so keeps it
/// if that default ever changes, and `tests::the_client_sets_nodelay` reads it
/// back from the socket.
pub(crate) fn client_builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder().tcp_nodelay(true)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    /// Read back from the client's own socket while its request is open.
    #[tokio::test]
    async fn the_client_sets_nodelay() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = super::client_builder().build().unwrap();
        let request = tokio::spawn(async move { client.get(format!("http://{addr}/")).send().await });
        let (mut accepted, _) = listener.accept().await.unwrap();
        // The connector sets the option after the connect completes: once the
        // request arrives it has.
        let mut head = [0u8; 16];
        tokio::io::AsyncReadExt::read_exact(&mut accepted, &mut head).await.unwrap();
        assert_eq!(quiver_testkit::sockets::client_nodelay(addr), Ok(true));
        request.abort();
    }
}
