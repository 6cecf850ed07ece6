#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{ElicitRequestParams, Request};
use serde_json::json;

use super::*;

fn elicit() -> ServerRequest {
    let params: ElicitRequestParams = serde_json::from_value(json!({"message": "your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}))
    .unwrap();
    ServerRequest::ElicitRequest(Request::new(params))
}

/// A route to a real client (rmcp's `Peer` cannot be built otherwise; these
/// calls send it nothing), joined by an in-memory pipe; the services are
/// returned to keep it alive.
async fn route() -> (Route, impl Sized) {
    use rmcp::ServiceExt;
    #[derive(Clone)]
    struct Quiet;
    impl rmcp::ServerHandler for Quiet {}
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move { Quiet.serve(ours).await.unwrap() });
    let client = ().serve(theirs).await.unwrap();
    let server = server.await.unwrap();
    let route =
        Route { peer: server.peer().clone(), request_id: RequestId::Number(1), progress_token: None, log_level: None };
    (route, (server, client))
}

fn capable() -> ClientCapabilities {
    serde_json::from_value(json!({"elicitation": {}})).unwrap()
}

/// Sets its flag when dropped: shows a call's task was aborted.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The calls a test started, and what keeps their routes' clients alive.
#[derive(Default)]
struct Calls(Vec<Box<dyn std::any::Any>>);

impl Calls {
    async fn start(&mut self, asks: usize, dropped: Arc<AtomicBool>) -> Parked {
        let (parked, keep) = call(asks, dropped).await;
        self.0.push(Box::new(keep));
        parked
    }
}

/// A call that asks its client `asks` times, then answers with what it was
/// told; `dropped` is set if its task is aborted.
async fn call(asks: usize, dropped: Arc<AtomicBool>) -> (Parked, impl Sized) {
    let (route, keep) = route().await;
    let (asker, receiver) = asker(capable(), route);
    (
        Parked::start(
            async move {
                let _guard = Dropped(dropped);
                let mut said = Vec::new();
                for _ in 0..asks {
                    match asker.ask(elicit()).await {
                        Ok(answer) => said.push(serde_json::to_value(answer).unwrap()),
                        Err(e) => said.push(json!(e.to_string())),
                    }
                }
                let text = rmcp::model::ContentBlock::text(json!(said).to_string());
                Ok(ServerResult::CallToolResult(rmcp::model::CallToolResult::success(vec![text])))
            },
            receiver,
        ),
        keep,
    )
}

fn binding(tool: &str, args: Value, client: &str) -> Binding {
    Binding::new("tools/call", tool, args.as_object(), client)
}

/// The input requests and state of an `InputRequiredResult`.
fn asked(round: Round) -> (Vec<String>, String) {
    match round {
        Round::Asked(result) => (result.input_requests.unwrap().into_keys().collect(), result.request_state.unwrap()),
        other => panic!("expected InputRequiredResult, got {other:?}"),
    }
}

fn finished(round: Round) -> Value {
    match round {
        Round::Ended(outcome) => match *outcome {
            Ok(ServerResult::CallToolResult(result)) => {
                serde_json::from_str(&result.content[0].as_text().unwrap().text).unwrap_or(Value::Null)
            }
            other => panic!("expected a tool's result, got {other:?}"),
        },
        other => panic!("expected a complete result, got {other:?}"),
    }
}

fn accept(name: &str) -> InputResponses {
    [("elicitation-1".to_string(), json!({"action": "accept", "content": {"name": name}}))].into()
}

#[tokio::test]
async fn a_state_resumes_its_own_call_once() {
    let mut calls = Calls::default();
    let rounds = InputRounds::new(InputLimits::default());
    let ct = CancellationToken::new();
    let bound = binding("ask", json!({"a": 1, "b": [1, {"x": 2, "y": 3}]}), "alice");
    let first = rounds.drive(calls.start(1, Arc::default()).await, &bound, &ct).await;
    let (keys, state) = asked(first);
    assert_eq!(keys, ["elicitation-1"]);
    assert_eq!(rounds.parked(), 1);

    // Another tool, other arguments, another client, another kind of request
    // of the same name, a changed state: refused before any lookup.
    let args = json!({"a": 1, "b": [1, {"x": 2, "y": 3}]});
    for (other, what) in [
        (Binding::new("prompts/get", "ask", args.as_object(), "alice"), "method"),
        (binding("other", json!({"a": 1, "b": [1, {"x": 2, "y": 3}]}), "alice"), "tool"),
        (binding("ask", json!({"a": 2, "b": [1, {"x": 2, "y": 3}]}), "alice"), "arguments"),
        (binding("ask", json!({"a": 1, "b": [1, {"x": 2, "y": 3}]}), "bob"), "client"),
    ] {
        let refused = rounds.resume(&state, &other).err().unwrap_or_else(|| panic!("another {what} resumed"));
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
        assert!(refused.message.contains("does not verify"), "{}", refused.message);
    }
    for changed in [format!("{state}-TAMPERED"), state.replacen('.', "", 1), String::new()] {
        let refused = rounds.resume(&changed, &bound).err().expect("a changed state resumed");
        assert!(refused.message.contains("does not verify"), "{}", refused.message);
    }
    assert_eq!(rounds.parked(), 1, "a refused retry leaves the call parked");

    // The same arguments in another key order are the same call.
    let same = binding("ask", json!({"b": [1, {"y": 3, "x": 2}], "a": 1}), "alice");
    let (id, parked) = rounds.resume(&state, &same).unwrap();
    let parked = rounds.answer(&id, parked, &accept("ada")).unwrap();
    let said = finished(rounds.drive(parked, &bound, &ct).await);
    assert_eq!(said, json!([{"action": "accept", "content": {"name": "ada"}}]));

    let again = rounds.resume(&state, &bound).err().expect("a state resumed twice");
    assert!(again.message.contains("answered already"), "{}", again.message);
}

#[tokio::test]
async fn each_round_has_its_own_state_and_a_missing_answer_is_asked_again() {
    let mut calls = Calls::default();
    let rounds = InputRounds::new(InputLimits::default());
    let ct = CancellationToken::new();
    let bound = binding("ask", json!({}), "alice");
    let (_, first) = asked(rounds.drive(calls.start(2, Arc::default()).await, &bound, &ct).await);

    // A retry without the answer (only a key quiver never asked): asked again, under a new state.
    let (id, parked) = rounds.resume(&first, &bound).unwrap();
    let wrong: InputResponses = [("user_name".to_string(), json!({"action": "accept"}))].into();
    let parked = rounds.answer(&id, parked, &wrong).unwrap();
    let (keys, second) = asked(rounds.drive(parked, &bound, &ct).await);
    assert_eq!(keys, ["elicitation-1"]);
    assert_ne!(second, first);

    // Answered: the call asks its second question, under another key and state.
    let (id, parked) = rounds.resume(&second, &bound).unwrap();
    let parked = rounds.answer(&id, parked, &accept("ada")).unwrap();
    let (keys, third) = asked(rounds.drive(parked, &bound, &ct).await);
    assert_eq!(keys, ["elicitation-2"]);
    assert!(third != first && third != second);

    let (id, parked) = rounds.resume(&third, &bound).unwrap();
    let declined: InputResponses = [("elicitation-2".to_string(), json!({"action": "decline"}))].into();
    let parked = rounds.answer(&id, parked, &declined).unwrap();
    let said = finished(rounds.drive(parked, &bound, &ct).await);
    assert_eq!(said, json!([{"action": "accept", "content": {"name": "ada"}}, {"action": "decline"}]));
    assert_eq!(rounds.parked(), 0);
}

#[tokio::test]
async fn a_malformed_answer_is_refused_and_the_call_stays_parked_under_its_state() {
    let mut calls = Calls::default();
    let rounds = InputRounds::new(InputLimits::default());
    let ct = CancellationToken::new();
    let bound = binding("ask", json!({}), "alice");
    let (_, state) = asked(rounds.drive(calls.start(1, Arc::default()).await, &bound, &ct).await);
    let (id, parked) = rounds.resume(&state, &bound).unwrap();
    let bad: InputResponses = [("elicitation-1".to_string(), json!(12345))].into();
    let refused = rounds.answer(&id, parked, &bad).err().expect("a number taken as an ElicitResult");
    assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
    assert!(
        refused.message.contains("inputResponses[\"elicitation-1\"] is not an ElicitResult"),
        "{}",
        refused.message
    );
    let (id, parked) = rounds.resume(&state, &bound).unwrap();
    let parked = rounds.answer(&id, parked, &accept("ada")).unwrap();
    assert_eq!(finished(rounds.drive(parked, &bound, &ct).await)[0]["content"]["name"], "ada");
}

#[tokio::test]
async fn a_call_not_resumed_in_time_is_dropped_and_so_cancelled() {
    let mut calls = Calls::default();
    let limits = InputLimits { wait: Duration::from_millis(100), max_parked: 4 };
    let rounds = InputRounds::new(limits);
    let ct = CancellationToken::new();
    let bound = binding("ask", json!({}), "alice");
    let dropped = Arc::new(AtomicBool::new(false));
    let (_, state) = asked(rounds.drive(calls.start(1, Arc::clone(&dropped)).await, &bound, &ct).await);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(rounds.parked(), 0);
    assert!(dropped.load(Ordering::SeqCst), "the abandoned call's task still runs");
    let refused = rounds.resume(&state, &bound).err().expect("an expired state resumed");
    assert!(refused.message.contains("waited longer than 100 ms"), "{}", refused.message);
}

#[tokio::test]
async fn past_the_cap_a_call_that_asks_is_cancelled_with_a_reason() {
    let mut calls = Calls::default();
    let rounds = InputRounds::new(InputLimits { wait: Duration::from_secs(60), max_parked: 1 });
    let ct = CancellationToken::new();
    let bound = binding("ask", json!({}), "alice");
    asked(rounds.drive(calls.start(1, Arc::default()).await, &bound, &ct).await);
    let dropped = Arc::new(AtomicBool::new(false));
    let refused = rounds.drive(calls.start(1, Arc::clone(&dropped)).await, &bound, &ct).await;
    let Round::Stopped(text) = refused else { panic!("the second call was parked: {refused:?}") };
    assert!(text.contains("1 calls are already waiting"), "{text}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(dropped.load(Ordering::SeqCst), "the refused call still runs");
    assert_eq!(rounds.parked(), 1);
}

#[tokio::test]
async fn a_call_that_asks_nothing_just_answers() {
    let mut calls = Calls::default();
    let rounds = InputRounds::new(InputLimits::default());
    let said = finished(
        rounds
            .drive(calls.start(0, Arc::default()).await, &binding("t", json!({}), ""), &CancellationToken::new())
            .await,
    );
    assert_eq!(said, json!([]));
}

#[tokio::test]
async fn requests_sent_together_are_asked_in_one_round() {
    let (route, _keep) = route().await;
    let (asker, receiver) = asker(capable(), route);
    // As a server's three requests arrive: each from a task of its own, a
    // few milliseconds apart.
    let parked = Parked::start(
        async move {
            let ask = |delay: u64| {
                let asker = asker.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    asker.ask(elicit()).await.map(|a| serde_json::to_value(a).unwrap()).unwrap_or_default()
                }
            };
            let said = tokio::join!(ask(0), ask(5), ask(10));
            let text = rmcp::model::ContentBlock::text(json!([said.0, said.1, said.2]).to_string());
            Ok(ServerResult::CallToolResult(rmcp::model::CallToolResult::success(vec![text])))
        },
        receiver,
    );
    let rounds = InputRounds::new(InputLimits::default());
    let (ct, bound) = (CancellationToken::new(), binding("ask", json!({}), "alice"));
    let (keys, state) = asked(rounds.drive(parked, &bound, &ct).await);
    assert_eq!(keys, ["elicitation-1", "elicitation-2", "elicitation-3"]);
    let (id, parked) = rounds.resume(&state, &bound).unwrap();
    let answer = json!({"action": "accept", "content": {"name": "ada"}});
    let all: InputResponses = keys.iter().map(|k| (k.clone(), answer.clone())).collect();
    let parked = rounds.answer(&id, parked, &all).unwrap();
    assert_eq!(finished(rounds.drive(parked, &bound, &ct).await), json!([answer, answer, answer]));
}
