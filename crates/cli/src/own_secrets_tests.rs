#![allow(clippy::unwrap_used)]

use super::key_variables_of;

#[test]
fn key_variables_of_providers_and_servers() {
    let table: toml::Table = toml::from_str(
        r#"
        [providers.corp]
        base_url = "https://llm.corp"
        api_key_env = "CORP_LLM_CRED"
        [providers.deepseek]
        default_model = "x"
        [mcp_servers.api]
        url = "https://api.example"
        bearer_token_env = "API_BEARER"
        oauth_client_secret_env = "API_CLIENT_SECRET"
        [mcp_servers.local]
        command = "srv"
        "#,
    )
    .unwrap();
    assert_eq!(key_variables_of(&table), ["CORP_LLM_CRED", "API_BEARER", "API_CLIENT_SECRET"]);
}
