//! Tasks bound to their caller, with real tokens (issue 26): `toolwire
//! serve --http` as a resource server of the `oidc-provider` harness. A
//! task alice starts through one OAuth client reads, for bob and for
//! alice through another client, exactly like an unknown task, for
//! `tasks/get`, `tasks/update` and `tasks/cancel` alike; without a token
//! it is the 401 of any request.
//!
//! Spec: extensions/tasks#security-considerations

use super::harness::{claims, pair};
use serde_json::{Value, json};

fn tasks_meta() -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}}
    }})
}

#[tokio::test]
async fn another_principal_or_client_finds_no_task_of_alices() {
    let (auth, tw) = pair(&[], &[]).await;
    let token = |sub: &'static str, client: &'static str| {
        let mut c = claims(&auth.issuer, &tw.resource);
        c["sub"] = json!(sub);
        c["client_id"] = json!(client);
        c["jti"] = json!(format!("{sub}-{client}"));
        auth.sign("current", json!({}), c)
    };
    let alice = token("alice", "app-1").await;
    let alice_elsewhere = token("alice", "app-2").await;
    let bob = token("bob", "app-1").await;

    let r = tw
        .call(
            Some(&alice),
            1,
            "tools/call",
            json!({"name": "report", "arguments": {"pages": 100}, "_meta": tasks_meta()}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let created = r.json();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();

    let get = json!({"taskId": id, "_meta": tasks_meta()});
    let r = tw.call(Some(&alice), 2, "tasks/get", get.clone()).await;
    assert_eq!(r.json()["result"]["status"], "working", "{}", r.text());

    let unknown = tw
        .call(
            Some(&bob),
            3,
            "tasks/get",
            json!({"taskId": "tAAAAAAAAAAAAAAAAAAAAAA", "_meta": tasks_meta()}),
        )
        .await
        .json();
    for (who, token) in [("bob", &bob), ("alice through app-2", &alice_elsewhere)] {
        let update = json!({"taskId": id, "inputResponses": {}, "_meta": tasks_meta()});
        for (method, params) in [
            ("tasks/get", get.clone()),
            ("tasks/update", update),
            ("tasks/cancel", get.clone()),
        ] {
            let r = tw.call(Some(token), 4, method, params).await;
            let v = r.json();
            assert_eq!(v["error"]["code"], -32602, "{who} {method}: {v}");
            assert_eq!(
                v["error"]["message"], unknown["error"]["message"],
                "{who} {method}: reads like an unknown task"
            );
        }
    }
    let r = tw.call(None, 5, "tasks/get", get.clone()).await;
    assert_eq!(r.status, 401, "{}", r.text());
    // Nobody else's cancel reached it; alice's own does.
    let r = tw.call(Some(&alice), 6, "tasks/get", get.clone()).await;
    assert_eq!(r.json()["result"]["status"], "working", "{}", r.text());
    let r = tw.call(Some(&alice), 7, "tasks/cancel", get.clone()).await;
    assert_eq!(r.json()["result"]["resultType"], "complete", "{}", r.text());
}
