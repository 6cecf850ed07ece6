//! Which models are shown the images tools return. A tool result's image
//! blocks reach a vision-capable model as images (Anthropic: inside the
//! `tool_result`; OpenAI-compatible: in a user message right after the turn's
//! tool results, since `tool` messages carry text only); every other model
//! reads the text stand-in (`[image image/png, 3.9 KB]`).
//!
//! The table is by model-id prefix and deliberately short: sending an image to
//! a text-only model is a 400 for the whole request, so an unknown model gets
//! text, and `[providers.NAME] vision = true` opts a provider in.

/// Model-id prefixes known to accept image input.
const VISION_MODELS: &[&str] = &[
    "claude-",
    "gpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-5",
    "o3",
    "o4-mini",
    "gemini-",
    "qwen-vl",
    "qwen2.5-vl",
    "llava",
];

/// Whether `model` is shown images; `configured` (the provider's `vision`
/// setting) wins when set.
pub fn sees_images(model: &str, configured: Option<bool>) -> bool {
    configured.unwrap_or_else(|| {
        let model = model.to_ascii_lowercase();
        // Served behind a router, ids look like `openai/gpt-4o`.
        let bare = model.rsplit('/').next().unwrap_or(&model);
        VISION_MODELS.iter().any(|p| bare.starts_with(p))
    })
}

/// The `data:` URL of a base64 image, as OpenAI's `image_url` takes it.
pub fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::message::{Message, ModelRequest, ToolCall, ToolImage};

    fn request(model: &str, then: Option<Message>) -> ModelRequest {
        let mut messages = vec![
            Message::user("What does the screenshot show?"),
            Message::Assistant {
                text: String::new(),
                reasoning: None,
                reasoning_signature: None,
                tool_calls: vec![ToolCall { id: "c1".into(), name: "read_file".into(), arguments: "{}".into() }],
            },
            Message::Tool {
                call_id: "c1".into(),
                content: "`a.png`: image/png\n\n[image image/png, 3 bytes]".into(),
                is_error: false,
                images: vec![ToolImage { mime_type: "image/png".into(), data: "AAAA".into() }],
                loaded: Vec::new(),
            },
        ];
        messages.extend(then);
        ModelRequest {
            model: model.into(),
            system: "sys".into(),
            messages,
            tools: json!([]),
            head_len: 0,
            deferred_tools: Vec::new(),
            max_output_tokens: None,
            effort: None,
            stream: false,
            cache_key: None,
        }
    }

    fn openai_messages(req: &ModelRequest, vision: Option<bool>) -> Vec<Value> {
        let dialect = crate::openai::OpenAiDialect { vision, ..Default::default() };
        crate::openai::request_body(req, &dialect)["messages"].as_array().unwrap().clone()
    }

    #[test]
    fn openai_vision_models_get_the_image_after_the_tool_results() {
        let messages = openai_messages(&request("gpt-4o", None), None);
        assert_eq!(messages.len(), 5, "{messages:?}");
        assert_eq!(messages[3]["role"], "tool");
        assert_eq!(messages[4]["role"], "user");
        assert_eq!(messages[4]["content"][1]["image_url"]["url"], "data:image/png;base64,AAAA");
        // The next request extends this one byte for byte.
        let next = openai_messages(&request("gpt-4o", Some(Message::user("and?"))), None);
        assert_eq!(&next[..5], &messages[..]);
        // A text model reads only the stand-in; a provider can opt in or out.
        let text_only = openai_messages(&request("deepseek-chat", None), None);
        assert_eq!(text_only.len(), 4);
        assert!(!Value::Array(text_only).to_string().contains("AAAA"));
        assert_eq!(openai_messages(&request("deepseek-chat", None), Some(true)).len(), 5);
        assert_eq!(openai_messages(&request("gpt-4o", None), Some(false)).len(), 4);
    }

    #[test]
    fn anthropic_vision_models_get_the_image_inside_the_tool_result() {
        let body = crate::anthropic::request_body(&request("claude-sonnet-4-5", None), None);
        let result = &body["messages"][2]["content"][0];
        assert_eq!(result["type"], "tool_result");
        assert_eq!(result["content"][0]["type"], "text");
        assert_eq!(
            result["content"][1]["source"],
            json!({"type": "base64", "media_type": "image/png", "data": "AAAA"})
        );
        let text_only = crate::anthropic::request_body(&request("claude-sonnet-4-5", None), Some(false));
        assert!(text_only["messages"][2]["content"][0]["content"].is_string());
    }

    #[test]
    fn known_vision_models_and_overrides() {
        assert!(sees_images("claude-sonnet-4-5", None));
        assert!(sees_images("gpt-4o-mini", None));
        assert!(sees_images("openai/gpt-4.1", None));
        assert!(!sees_images("deepseek-chat", None));
        assert!(!sees_images("deepseek-reasoner", None));
        assert!(!sees_images("my-local-model", None));
        assert!(sees_images("my-local-model", Some(true)));
        assert!(!sees_images("gpt-4o", Some(false)));
        assert_eq!(data_url("image/png", "AAAA"), "data:image/png;base64,AAAA");
    }
}
