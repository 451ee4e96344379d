//! MCP Apps (the `io.modelcontextprotocol/ui` extension) on the server, in
//! process (`toolwire::testing`): app interfaces and the tools that name
//! them, as listed and read by clients of both eras; what registration
//! refuses; the capability offered only while an app is registered; and a
//! tool answering differently for a host that renders apps.

use serde_json::{Value, json};
use toolwire::apps::{APP_MIME_TYPE, Csp, Permissions, UI_EXTENSION, Visibility};
use toolwire::proto::types::{ClientCapabilities, ResourceContents};
use toolwire::testing::TestClient;
use toolwire::{RegistrationError, RequestContext, Resource, Server, ServerConfig, Tool};

const PAGE: &str = "<!DOCTYPE html>\n<html><body><canvas id=\"chart\"></canvas></body></html>";

fn object() -> Value {
    json!({"type": "object"})
}

/// The chart interface, a tool that renders with it (answering "one tool,
/// two answers"), and an app-only tool.
fn server() -> Server {
    let chart = Resource::app("ui://charts/line", "Line chart")
        .description("A line chart of a series")
        .csp(
            Csp::new()
                .connect("https://data.example")
                .resource("https://cdn.example"),
        )
        .permissions(Permissions::new().clipboard_write())
        .prefers_border(false)
        .html(PAGE)
        .expect("the interface");
    let hidden = Resource::app("ui://charts/hidden", "Hidden")
        .unlisted()
        .html_blob(PAGE.as_bytes().to_vec())
        .expect("the blob interface");
    let plot = Tool::builder("plot")
        .input_schema(object())
        .ui("ui://charts/line")
        .handler(|_args: Value, cx: RequestContext| async move {
            match cx.ui() {
                Some(ui) if ui.renders_apps() => "Plotted 3 points (see the chart).".to_owned(),
                _ => "Points: (0, 1), (1, 4), (2, 9)".to_owned(),
            }
        })
        .expect("plot");
    let zoom = Tool::builder("zoom")
        .input_schema(object())
        .ui("ui://charts/line")
        .visibility([Visibility::App])
        .handler(|_args: Value, _cx| async { "zoomed" })
        .expect("zoom");
    Server::new(ServerConfig::new("charts", "1.0.0"))
        .with_resource(chart)
        .and_then(|s| s.with_resource(hidden))
        .and_then(|s| s.with_tool(plot))
        .and_then(|s| s.with_tool(zoom))
        .expect("registered")
}

fn renders_apps() -> ClientCapabilities {
    serde_json::from_value(json!({
        "extensions": { UI_EXTENSION: { "mimeTypes": [APP_MIME_TYPE] } }
    }))
    .expect("capabilities")
}

#[tokio::test]
async fn tools_name_their_interface_under_both_keys_and_keep_their_visibility() {
    let c = TestClient::new(&server());
    let tools = c.list_tools().await.expect("tools/list").tools;
    let meta = |name: &str| {
        let t = tools.iter().find(|t| t.name == name).expect("listed");
        Value::Object(t.meta.clone().expect("_meta"))
    };
    assert_eq!(
        meta("plot"),
        json!({"ui": {"resourceUri": "ui://charts/line"}, "ui/resourceUri": "ui://charts/line"})
    );
    // Lists do not vary by client: an app-only tool is listed for every
    // client, and a host leaves it out of the model's list.
    assert_eq!(meta("zoom")["ui"]["visibility"], json!(["app"]));
}

#[tokio::test]
async fn interfaces_are_listed_and_read_with_their_meta_and_mime_type() {
    let c = TestClient::new(&server());
    let listed = c.list_resources().await.expect("resources/list").resources;
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        ["ui://charts/line"],
        "the unlisted interface is left out"
    );
    let line = &listed[0];
    assert_eq!(line.mime_type.as_deref(), Some(APP_MIME_TYPE));
    let expected_meta = json!({"ui": {
        "csp": {"connectDomains": ["https://data.example"], "resourceDomains": ["https://cdn.example"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": false
    }});
    assert_eq!(
        Value::Object(line.meta.clone().expect("_meta")),
        expected_meta
    );

    let read = c.read_resource("ui://charts/line").await.expect("read");
    let ResourceContents::Text(text) = &read.contents[0] else {
        panic!("text contents: {:?}", read.contents);
    };
    assert_eq!(text.text, PAGE);
    assert_eq!(text.mime_type.as_deref(), Some(APP_MIME_TYPE));
    assert_eq!(
        Value::Object(text.meta.clone().expect("_meta")),
        expected_meta
    );

    // Unlisted, and read all the same; as a blob.
    let read = c.read_resource("ui://charts/hidden").await.expect("read");
    let ResourceContents::Blob(blob) = &read.contents[0] else {
        panic!("blob contents: {:?}", read.contents);
    };
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&blob.blob)
        .expect("base64");
    assert_eq!(bytes, PAGE.as_bytes());
    assert_eq!(blob.mime_type.as_deref(), Some(APP_MIME_TYPE));
}

#[tokio::test]
async fn the_extension_is_offered_while_an_app_is_registered_in_both_eras() {
    let plain = Server::new(ServerConfig::new("plain", "1.0.0"));
    let offered = |caps: &toolwire::proto::types::ServerCapabilities| {
        caps.extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(UI_EXTENSION))
    };
    let d = TestClient::new(&plain).discover().await.expect("discover");
    assert!(!offered(&d.capabilities), "no app, no extension");
    let apps = server();
    let d = TestClient::new(&apps).discover().await.expect("discover");
    assert!(offered(&d.capabilities));
    let legacy = TestClient::legacy(&apps, "2025-11-25")
        .await
        .expect("initialize");
    let init = legacy.initialize_result().expect("initialize result");
    assert_eq!(
        init["capabilities"]["extensions"][UI_EXTENSION],
        json!({}),
        "{init}"
    );
    let legacy = TestClient::legacy(&plain, "2025-11-25")
        .await
        .expect("initialize");
    let init = legacy.initialize_result().expect("initialize result");
    assert!(init["capabilities"].get("extensions").is_none(), "{init}");
}

#[tokio::test]
async fn one_tool_answers_a_host_that_renders_apps_and_one_that_does_not() {
    let server = server();
    let text = |r: &toolwire::proto::types::CallToolResult| {
        serde_json::to_value(&r.content).expect("content")[0]["text"].clone()
    };
    let plain = TestClient::new(&server);
    let r = plain.call_tool("plot", json!({})).await.expect("call");
    assert_eq!(text(&r), "Points: (0, 1), (1, 4), (2, 9)");
    let host = TestClient::new(&server).with_capabilities(renders_apps());
    let r = host.call_tool("plot", json!({})).await.expect("call");
    assert_eq!(text(&r), "Plotted 3 points (see the chart).");
}

#[test]
fn registration_refuses_what_a_host_could_not_render() {
    let resource_problem = |r: Result<Resource, RegistrationError>| match r {
        Err(RegistrationError::Resource { problem, .. }) => problem.to_string(),
        other => panic!("refused: {other:?}"),
    };
    let e = resource_problem(Resource::app("https://x/page", "p").html(PAGE));
    assert!(e.contains("ui:// URI"), "{e}");
    let e = resource_problem(Resource::app("ui://x/page", "p").html("<div>a fragment</div>"));
    assert!(e.contains("<!DOCTYPE html>"), "{e}");
    let e = resource_problem(Resource::app("ui://x/page", "p").html_blob(vec![0xff, 0xfe]));
    assert!(e.contains("UTF-8"), "{e}");

    let e = Tool::builder("t")
        .input_schema(object())
        .ui("https://x/page")
        .handler(|_a: Value, _cx| async { "x" })
        .expect_err("not ui://")
        .to_string();
    assert!(e.contains("is not a ui:// URI"), "{e}");

    let server = Server::new(ServerConfig::new("s", "1.0.0"));
    let tool = Tool::builder("t")
        .input_schema(object())
        .ui("ui://x/page")
        .handler(|_a: Value, _cx| async { "x" })
        .expect("tool");
    let e = server
        .add_tool(tool.clone())
        .expect_err("no such interface")
        .to_string();
    assert!(
        e.contains("\"ui://x/page\" is not a registered resource")
            && e.contains("Resource::app(\"ui://x/page\""),
        "{e}"
    );
    // A resource at that URI that is not an app interface.
    server
        .add_resource(
            Resource::builder("ui://x/page", "p")
                .text("plain")
                .expect("resource"),
        )
        .expect("added");
    let e = server
        .add_tool(tool.clone())
        .expect_err("not an app")
        .to_string();
    assert!(e.contains("another MIME type"), "{e}");
    server.remove_resource("ui://x/page");
    server
        .add_resource(Resource::app("ui://x/page", "p").html(PAGE).expect("app"))
        .expect("added");
    server.add_tool(tool).expect("now it is there");
}

/// `#[tool(ui = ..., visibility = ...)]` says the same as the builder.
#[cfg(feature = "macros")]
#[toolwire::tool(ui = "ui://charts/line", visibility = "app")]
async fn pan(dx: i32) -> String {
    format!("panned by {dx}")
}

#[cfg(feature = "macros")]
#[tokio::test]
async fn the_tool_macro_names_an_interface_and_a_visibility() {
    let server = server();
    server
        .add_tool(pan_tool().expect("pan"))
        .expect("registered");
    let c = TestClient::new(&server);
    let pan = c
        .listed_tool("pan")
        .await
        .expect("tools/list")
        .expect("pan");
    assert_eq!(
        Value::Object(pan.meta.expect("_meta")),
        json!({"ui": {"resourceUri": "ui://charts/line", "visibility": ["app"]}, "ui/resourceUri": "ui://charts/line"})
    );
}
