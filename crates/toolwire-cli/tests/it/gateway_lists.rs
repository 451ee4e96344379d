//! `toolwire gateway`'s merged lists: the fingerprint each carries, equal
//! on two gateway processes with one configuration and new when the list
//! changes.

use super::gateway::{gateway, health, names, scratch, stdio_upstream, write_config};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn merged_lists_carry_a_fingerprint_equal_on_replicas_and_new_on_change() {
    const KEY: &str = "io.toolwire/fingerprint";
    let dir = scratch("fingerprint");
    let config = write_config(
        &dir,
        &format!("{}{}", stdio_upstream("demo"), stdio_upstream("two")),
    );
    let mut a = gateway(&config);
    let mut b = gateway(&config);
    let list_a = a.call(1, "tools/list", json!({})).await;
    let list_b = b.call(1, "tools/list", json!({})).await;
    let fp = list_a["result"]["_meta"][KEY]
        .as_str()
        .unwrap_or_else(|| panic!("no fingerprint: {list_a}"))
        .to_owned();
    assert_eq!(
        list_b["result"]["_meta"][KEY],
        fp.as_str(),
        "same config, same list"
    );
    assert_eq!(
        list_a["result"]["cacheScope"], "public",
        "no auth, public upstreams"
    );
    for method in ["prompts/list", "resources/list", "resources/templates/list"] {
        let ra = a.call(2, method, json!({})).await;
        let rb = b.call(2, method, json!({})).await;
        assert!(ra["result"]["_meta"][KEY].is_string(), "{method}: {ra}");
        assert_eq!(
            ra["result"]["_meta"][KEY], rb["result"]["_meta"][KEY],
            "{method}"
        );
    }
    // The health report names the same fingerprint.
    let h = health(&mut a, 3).await;
    assert_eq!(h["toolsFingerprint"], fp.as_str(), "{h}");
    // A tool defined on replica a's upstream changes a's list only.
    let r = a
        .call(
            4,
            "tools/call",
            json!({"name": "demo__define_tool", "arguments": {"name": "fresh", "text": "new"}}),
        )
        .await;
    assert!(r["result"]["isError"] != true, "{r}");
    let mut id = 10;
    let changed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            id += 1;
            let l = a.call(id, "tools/list", json!({})).await;
            if names(&l).contains(&"demo__fresh".to_owned()) {
                return l;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the new tool is listed");
    let now = changed["result"]["_meta"][KEY]
        .as_str()
        .expect("fingerprint");
    assert_ne!(now, fp, "a changed list, a new fingerprint");
    let list_b = b.call(5, "tools/list", json!({})).await;
    assert_eq!(
        list_b["result"]["_meta"][KEY],
        fp.as_str(),
        "b is unchanged"
    );
}
