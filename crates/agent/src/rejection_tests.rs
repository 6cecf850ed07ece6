use super::ErrorBody;

#[test]
fn a_llama_cpp_python_500_wrapping_a_validation_error_names_the_field() {
    let text = r#"{"error":{"message":"1 validation error for ChatCompletionRequestAssistantMessage\nmessages.2.content\n  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]","type":"internal_server_error","param":null,"code":null}}"#;
    let body = ErrorBody::parse(text);
    assert!(body.invalid_body && !body.retryable(500));
    assert_eq!(body.field.as_deref(), Some("messages.2.content"));
    assert!(body.message.starts_with("1 validation error"));
}

/// llama-cpp-python 0.3.36, `chatml-function-calling`: its template reads
/// `message.content` of an assistant turn that has none.
#[test]
fn a_chat_template_missing_a_key_is_a_rejection_naming_it() {
    let text = r#"{"error":{"message":"'dict object' has no attribute 'content'","type":"internal_server_error","param":null,"code":null}}"#;
    let body = ErrorBody::parse(text);
    assert!(body.invalid_body && !body.retryable(500), "{body:?}");
    assert_eq!(body.field.as_deref(), Some("content"));
    let body = ErrorBody::parse(r#"{"error":{"message":"'content' is undefined"}}"#);
    assert_eq!((body.invalid_body, body.field.as_deref()), (true, Some("content")));
}

#[test]
fn fastapi_422_details_and_openai_params() {
    let body = ErrorBody::parse(
        r#"{"detail":[{"loc":["body","messages",2,"content"],"msg":"Field required","type":"missing"}]}"#,
    );
    assert_eq!((body.field.as_deref(), body.message.as_str()), (Some("messages.2.content"), "Field required"));
    let body = ErrorBody::parse(
        r#"{"error":{"message":"Invalid value","type":"invalid_request_error","param":"messages.[1].content"}}"#,
    );
    assert_eq!(body.field.as_deref(), Some("messages.[1].content"));
    let body = ErrorBody::parse(
        r#"{"error":{"message":"'content' is a required property - 'messages.2'","type":"invalid_request_error"}}"#,
    );
    assert_eq!(body.field.as_deref(), Some("content"));
}

#[test]
fn transient_failures_stay_retryable() {
    for (status, text) in [
        (500, r#"{"error":{"message":"CUDA out of memory","type":"internal_server_error"}}"#),
        (529, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
        (503, "upstream connect error or disconnect/reset before headers"),
        (502, "the upstream server cannot be reached"),
        (429, r#"{"error":{"message":"Rate limit reached"}}"#),
        (502, ""),
    ] {
        let body = ErrorBody::parse(text);
        assert!(body.retryable(status), "{status} {text}: {body:?}");
    }
    assert_eq!(ErrorBody::parse("").message, "(empty body)");
    assert!(!ErrorBody::parse(r#"{"error":{"message":"bad key"}}"#).retryable(401));
}

#[test]
fn a_server_that_cannot_stream_with_tools_says_so() {
    let body = ErrorBody::parse(r#"{"error":{"message":"Streaming is not supported with tools"}}"#);
    assert!(body.no_streaming);
    let body = ErrorBody::parse(r#"{"error":{"message":"stream=True is not implemented for function calling"}}"#);
    assert!(body.no_streaming && !body.retryable(500));
    assert!(!ErrorBody::parse(r#"{"error":{"message":"model is loading"}}"#).no_streaming);
}
