//! The TLS crypto provider every HTTP client of quiver-mcp needs (the MCP
//! transport and the OAuth flow alike).

/// reqwest is built without a default TLS crypto provider (the workspace picks
/// `ring` once for everyone); install it unless someone already did.
pub(crate) fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing the race to another installer is fine: one provider is set.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
