#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;
use crate::spill::{SpillConfig, SpillStore};
use crate::{Audience, Capabilities, Domain, Engine, Registry, Risk, ToolResult, ToolSource, ToolSpec, Workspace};

#[test]
fn text_rendering_names_every_kind() {
    let blocks = vec![
        json!({"type": "text", "text": "look:"}),
        json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
        json!({"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}}),
        json!({"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "x/y"}}),
        json!({"type": "resource_link", "uri": "file:///c", "name": "c"}),
        json!({"type": "hologram"}),
    ];
    assert_eq!(
        render_text(&blocks),
        "look:\n\n[image image/png, 3 bytes]\n\n[resource file:///a.txt]\nhello\n\n\
         [binary resource file:///b.bin x/y, 3 bytes]\n\n[resource link c file:///c]\n\n[hologram content]"
    );
    assert_eq!(images(&blocks), vec![("image/png".to_string(), "AAAA".to_string())]);
}

fn spec() -> ToolSpec {
    ToolSpec {
        name: "pics".into(),
        description: "d".into(),
        input_schema: json!({"type": "object"}),
        domain: Domain::Mcp,
        risk: Risk::Read,
        capabilities: Capabilities::NONE,
        source: ToolSource::Native,
        prompt_snippet: None,
    }
}

async fn spilled(blocks: Vec<Value>, threshold: usize) -> (ToolResult, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let engine = std::sync::Arc::new(Engine::new(Registry::default(), crate::Manifest::builtin().unwrap()));
    let ctx = engine.context(Workspace::new(ws.path()).unwrap(), Audience::default());
    ctx.session
        .state::<SpillStore>()
        .configure(SpillConfig { root: dir.path().to_path_buf(), threshold_bytes: threshold });
    let mut result = ToolResult::ok(crate::ToolOutput::from_blocks(blocks));
    crate::spill::spill_if_large(&mut result, &spec(), &ctx).await;
    (result, dir)
}

#[tokio::test]
async fn small_blocks_pass_unchanged() {
    let blocks =
        vec![json!({"type": "text", "text": "hi"}), json!({"type": "image", "data": "AAAA", "mimeType": "image/png"})];
    let (result, _dir) = spilled(blocks.clone(), 1024).await;
    assert_eq!(result.blocks, blocks);
    assert!(result.metadata.get("spilled").is_none());
}

#[tokio::test]
async fn large_image_becomes_a_link_to_its_bytes_and_large_text_a_summary() {
    // Binary blocks have their own bound, far above the text threshold.
    let size = crate::spill::BINARY_INLINE_BYTES + 1;
    let raw: Vec<u8> = (0..size as u32).map(|i| (i % 251) as u8).collect();
    let data = base64::engine::general_purpose::STANDARD.encode(&raw);
    let text = (0..400).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
    let blocks =
        vec![json!({"type": "text", "text": text}), json!({"type": "image", "data": data, "mimeType": "image/png"})];
    let (result, _dir) = spilled(blocks, 1024).await;
    let text = result.blocks[0]["text"].as_str().unwrap();
    assert!(text.contains("saved as handle `out_1`"), "{text}");
    let link = &result.blocks[1];
    assert_eq!(link["type"], "resource_link");
    assert_eq!(link["mimeType"], "image/png");
    assert_eq!(link["size"], size);
    let path = link["uri"].as_str().unwrap().strip_prefix("file://").unwrap();
    assert!(path.ends_with("blob_1.png"), "{path}");
    assert_eq!(std::fs::read(path).unwrap(), raw, "the file holds the decoded bytes");
    assert_eq!(result.metadata["spilled"]["handle"], "out_1");
    assert!(result.content_text().contains("[resource link blob_1.png file://"), "{}", result.content_text());
}

#[tokio::test]
async fn undecodable_binary_stays_inline() {
    let blocks = vec![json!({"type": "image", "data": "!".repeat(8 << 20), "mimeType": "image/png"})];
    let (result, _dir) = spilled(blocks.clone(), 1024).await;
    assert_eq!(result.blocks, blocks);
}
