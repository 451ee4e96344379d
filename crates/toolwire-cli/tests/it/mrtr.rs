//! Multi round-trip requests through `toolwire serve`: `confirm_action`,
//! the capability gate, answers, and the sealed `requestState` (tampering,
//! expiry, replay on other arguments, keyrings shared by replicas).

use crate::support::Proc;
use serde_json::{Value, json};
use std::time::Duration;

const KEY_1: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
const KEY_2: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";
const KEY_3: &str = "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=";

fn caps(caps: Value) -> Value {
    json!({ "io.modelcontextprotocol/clientCapabilities": caps })
}

/// `tools/call confirm_action` from a client that supports form elicitation,
/// with `extra` merged into the params.
fn confirm(action: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": "confirm_action",
        "arguments": {"action": action},
        "_meta": caps(json!({"elicitation": {}})),
    });
    if let (Some(p), Value::Object(extra)) = (params.as_object_mut(), extra) {
        p.extend(extra);
    }
    params
}

fn accept(confirm: bool) -> Value {
    json!({"action": "accept", "content": {"confirm": confirm}})
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
}

fn state(r: &Value) -> String {
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    r["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {r}"))
        .to_owned()
}

fn assert_state_refused(r: &Value) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("requestState failed verification"),
        "{message}"
    );
}

async fn round_one(p: &mut Proc, id: i64, action: &str) -> String {
    state(&p.call(id, "tools/call", confirm(action, json!({}))).await)
}

#[tokio::test]
async fn confirm_action_without_elicitation_is_missing_capability() {
    let mut p = Proc::spawn();
    for (id, client) in [
        (1, json!({})),
        (2, json!({"sampling": {}, "roots": {}})),
        // URL mode only: a form cannot be sent.
        (3, json!({"elicitation": {"url": {}}})),
    ] {
        let r = p
            .call(
                id,
                "tools/call",
                json!({"name": "confirm_action", "arguments": {"action": "deploy"},
                       "_meta": caps(client)}),
            )
            .await;
        assert_eq!(r["error"]["code"], -32021, "{r}");
        let required = &r["error"]["data"]["requiredCapabilities"];
        assert!(required.is_object(), "{r}");
        assert!(required["elicitation"].is_object(), "{r}");
        assert!(r.get("result").is_none());
    }
}

#[tokio::test]
async fn round_one_asks_with_one_form_and_a_sealed_state() {
    let mut p = Proc::spawn();
    let r = p
        .call(1, "tools/call", confirm("launch the rockets", json!({})))
        .await;
    let res = &r["result"];
    assert_eq!(res["resultType"], "input_required", "{r}");
    let requests = res["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{r}");
    let ask = &requests["confirm"];
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["mode"], "form");
    let schema = &ask["params"]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["confirm"]["type"], "boolean");
    assert_eq!(schema["required"], json!(["confirm"]));
    assert_eq!(
        res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolwire-demo"
    );
    let sealed = state(&r);
    assert!(sealed.len() > 40, "{sealed}");
    assert!(!sealed.contains("rocket") && !sealed.contains("launch"));
}

#[tokio::test]
async fn accept_confirms_and_anything_else_does_not() {
    let mut p = Proc::spawn();
    let s = round_one(&mut p, 1, "deploy").await;
    let r = p
        .call(
            2,
            "tools/call",
            confirm(
                "deploy",
                json!({"requestState": s, "inputResponses": {"confirm": accept(true)}}),
            ),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(text(&r), "confirmed: deploy");
    assert_ne!(r["result"]["isError"], true);

    for (id, answer) in [
        (3, json!({"action": "decline"})),
        (4, json!({"action": "cancel"})),
        (5, accept(false)),
    ] {
        let r = p
            .call(
                id,
                "tools/call",
                confirm(
                    "deploy",
                    json!({"requestState": s, "inputResponses": {"confirm": answer}}),
                ),
            )
            .await;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert_eq!(text(&r), "not confirmed: deploy");
    }

    // Keys the round did not ask for are ignored, malformed or not.
    let r = p
        .call(
            6,
            "tools/call",
            confirm(
                "deploy",
                json!({"requestState": s, "inputResponses": {"confirm": accept(true),
                       "unknown_extra_key": 1, "another_unexpected": {"action": "accept"}}}),
            ),
        )
        .await;
    assert_eq!(text(&r), "confirmed: deploy");
}

/// Spec: basic/patterns/mrtr.mdx#error-handling — only answers to what the
/// verified state's round asked count. Without `requestState` nothing was
/// asked: the answers are ignored and round 1 starts, so dropping the state
/// cannot bypass its expiry or its binding.
#[tokio::test]
async fn answers_without_request_state_are_ignored() {
    let mut p = Proc::spawn();
    for (id, responses) in [
        (1, json!({"confirm": accept(true)})),
        (2, json!({"confirm": accept(true), "extra": 1})),
        // Malformed, but not asked for: ignored, not -32602.
        (3, json!({"confirm": 12345})),
    ] {
        let r = p
            .call(
                id,
                "tools/call",
                confirm("deploy", json!({"inputResponses": responses})),
            )
            .await;
        let fresh = state(&r);
        assert!(
            r["result"]["inputRequests"]["confirm"].is_object(),
            "{responses}: {r}"
        );
        // The round-1 state: its retry is round 2, and it completes.
        let r = p
            .call(
                id + 10,
                "tools/call",
                confirm(
                    "deploy",
                    json!({"requestState": fresh, "inputResponses": {"confirm": accept(true)}}),
                ),
            )
            .await;
        assert_eq!(text(&r), "confirmed: deploy");
    }
    // A state sealed for another request still fails, answers or not.
    let other = round_one(&mut p, 30, "destroy").await;
    let r = p
        .call(
            31,
            "tools/call",
            confirm(
                "deploy",
                json!({"requestState": other, "inputResponses": {"confirm": accept(true)}}),
            ),
        )
        .await;
    assert_state_refused(&r);
}

#[tokio::test]
async fn missing_or_wrong_keys_ask_again_with_a_new_state_each_round() {
    let mut p = Proc::spawn();
    let s1 = round_one(&mut p, 1, "deploy").await;
    let r = p
        .call(
            2,
            "tools/call",
            confirm(
                "deploy",
                json!({"requestState": s1, "inputResponses": {"wrong_key": accept(true)}}),
            ),
        )
        .await;
    let s2 = state(&r);
    assert!(r["result"]["inputRequests"]["confirm"].is_object(), "{r}");
    assert_ne!(s1, s2);
    let r = p
        .call(
            3,
            "tools/call",
            confirm("deploy", json!({"requestState": s2, "inputResponses": {}})),
        )
        .await;
    let s3 = state(&r);
    assert!(s3 != s1 && s3 != s2);
    let r = p
        .call(
            4,
            "tools/call",
            confirm(
                "deploy",
                json!({"requestState": s3, "inputResponses": {"confirm": accept(true)}}),
            ),
        )
        .await;
    assert_eq!(text(&r), "confirmed: deploy");
}

#[tokio::test]
async fn malformed_answers_are_invalid_params() {
    let mut p = Proc::spawn();
    let s = round_one(&mut p, 100, "deploy").await;
    for (id, responses) in [
        (1, json!({"confirm": 12345})),
        (2, json!({"confirm": "yes"})),
        (
            3,
            json!({"confirm": {"action": "accept", "content": {"confirm": "yes"}}}),
        ),
        (4, json!({"confirm": {"action": "maybe"}})),
        (5, json!(null)),
        (6, json!("not an object")),
    ] {
        let r = p
            .call(
                id,
                "tools/call",
                confirm(
                    "deploy",
                    json!({"requestState": s, "inputResponses": responses}),
                ),
            )
            .await;
        assert_eq!(r["error"]["code"], -32602, "{responses}: {r}");
    }
}

#[tokio::test]
async fn tampered_state_is_an_error_never_a_new_prompt() {
    let mut p = Proc::spawn();
    let s = round_one(&mut p, 1, "deploy").await;
    let mut flipped = s.clone().into_bytes();
    let mid = flipped.len() / 2;
    flipped[mid] = if flipped[mid] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).expect("ascii");
    for (id, bad) in [
        (2, format!("{s}-TAMPERED")),
        (3, flipped),
        (4, "garbage".to_owned()),
        (5, String::new()),
    ] {
        let r = p
            .call(
                id,
                "tools/call",
                confirm(
                    "deploy",
                    json!({"requestState": bad, "inputResponses": {"confirm": accept(true)}}),
                ),
            )
            .await;
        assert_state_refused(&r);
    }
}

#[tokio::test]
async fn state_replayed_on_other_arguments_or_tools_is_refused() {
    let mut p = Proc::spawn();
    let s = round_one(&mut p, 1, "deploy").await;
    let r = p
        .call(
            2,
            "tools/call",
            confirm(
                "delete everything",
                json!({"requestState": s, "inputResponses": {"confirm": accept(true)}}),
            ),
        )
        .await;
    assert_state_refused(&r);
    let r = p
        .call(
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}, "requestState": s}),
        )
        .await;
    assert_state_refused(&r);
}

#[tokio::test]
async fn expired_state_is_refused() {
    let mut p = Proc::spawn_with(&["--state-ttl-ms", "50"], &[]);
    let s = round_one(&mut p, 1, "deploy").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = p
        .call(
            2,
            "tools/call",
            confirm(
                "deploy",
                json!({"requestState": s, "inputResponses": {"confirm": accept(true)}}),
            ),
        )
        .await;
    assert_state_refused(&r);
    assert!(
        r["error"]["message"]
            .as_str()
            .expect("message")
            .contains("expired"),
        "{r}"
    );
}

#[tokio::test]
async fn replicas_with_one_keyring_open_each_others_state_through_rotation() {
    let mut a = Proc::spawn_with(&[], &[("TOOLWIRE_STATE_KEYS", KEY_1)]);
    let s = round_one(&mut a, 1, "deploy").await;
    let answer = json!({"requestState": s, "inputResponses": {"confirm": accept(true)}});

    // Another replica, same key.
    let mut b = Proc::spawn_with(&[], &[("TOOLWIRE_STATE_KEYS", KEY_1)]);
    let r = b
        .call(2, "tools/call", confirm("deploy", answer.clone()))
        .await;
    assert_eq!(text(&r), "confirmed: deploy");

    // A replica that rotated to KEY_2 keeps KEY_1 for opening (from a file).
    let file = std::env::temp_dir().join(format!("toolwire-it-keys-{}", std::process::id()));
    std::fs::write(&file, format!("# current\n{KEY_2}\n# previous\n{KEY_1}\n")).expect("write");
    let mut c = Proc::spawn_with(
        &["--state-keys-file", file.to_str().expect("utf-8 path")],
        &[("TOOLWIRE_STATE_KEYS", KEY_3)],
    );
    let r = c
        .call(3, "tools/call", confirm("deploy", answer.clone()))
        .await;
    assert_eq!(text(&r), "confirmed: deploy");
    // What it seals now opens where KEY_2 is known, not where only KEY_1 is.
    let s2 = round_one(&mut c, 4, "deploy").await;
    let _ = std::fs::remove_file(&file);
    let answer2 = json!({"requestState": s2, "inputResponses": {"confirm": accept(true)}});
    assert_state_refused(&a.call(5, "tools/call", confirm("deploy", answer2)).await);

    // Unrelated keys, or the default random per-process key, cannot open it.
    let mut d = Proc::spawn_with(&[], &[("TOOLWIRE_STATE_KEYS", KEY_3)]);
    assert_state_refused(
        &d.call(6, "tools/call", confirm("deploy", answer.clone()))
            .await,
    );
    let mut e = Proc::spawn();
    assert_state_refused(&e.call(7, "tools/call", confirm("deploy", answer)).await);
}

#[tokio::test]
async fn a_bad_keyring_stops_the_server_with_a_clear_message() {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .arg("serve")
        .env("TOOLWIRE_STATE_KEYS", "c2hvcnQ=")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("32 bytes"), "{stderr}");
}
