//! `toolwire resources|templates|read|prompts|prompt|complete|listen`: the
//! server features beyond tools on the command line, each with text output
//! and `--json`.

use super::{Connection, connect, print, render};
use anyhow::{Context as _, bail};
use clap::Args;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use toolwire::proto::types::{
    CompleteRequestParams, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, Role, SubscriptionFilter,
};
use toolwire::{ChangeNotification, Client, ClientBuilder};

/// `toolwire resources` and `toolwire templates` and `toolwire prompts`.
#[derive(Args, Debug)]
pub(crate) struct ListingArgs {
    /// The server's MCP endpoint, an http:// URL (or use --stdio).
    #[arg(value_name = "URL")]
    url: Option<String>,
    #[command(flatten)]
    connection: Connection,
}

/// `toolwire read`.
#[derive(Args, Debug)]
#[command(override_usage = "toolwire read [OPTIONS] <URL | --stdio COMMAND> <URI>")]
pub(crate) struct ReadArgs {
    /// [URL] URI: the endpoint (unless --stdio is given) and the resource.
    #[arg(value_name = "ARGS", required = true, num_args = 1..=2)]
    positional: Vec<String>,
    /// Write the contents to FILE as they are (text as is, a blob
    /// decoded), for example an app's HTML interface, instead of printing
    /// them.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    connection: Connection,
}

/// `toolwire prompt`.
#[derive(Args, Debug)]
#[command(
    override_usage = "toolwire prompt [OPTIONS] <URL | --stdio COMMAND> <NAME> [KEY=VALUE]..."
)]
pub(crate) struct PromptArgs {
    /// [URL] NAME [KEY=VALUE]...: the endpoint (unless --stdio is given),
    /// the prompt, and its arguments (strings).
    #[arg(value_name = "ARGS", required = true)]
    positional: Vec<String>,
    #[command(flatten)]
    connection: Connection,
}

/// `toolwire complete`.
#[derive(Args, Debug)]
#[command(
    override_usage = "toolwire complete [OPTIONS] <URL | --stdio COMMAND> <ARGUMENT=PARTIAL>\n       \
                      (--prompt NAME | --template URI_TEMPLATE)"
)]
pub(crate) struct CompleteArgs {
    /// [URL] ARGUMENT=PARTIAL: the endpoint (unless --stdio is given), the
    /// argument or template variable to complete and what is typed so far.
    #[arg(value_name = "ARGS", required = true, num_args = 1..=2)]
    positional: Vec<String>,
    /// Complete an argument of this prompt.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "template",
        required_unless_present = "template"
    )]
    prompt: Option<String>,
    /// Complete a variable of this resource template.
    #[arg(long, value_name = "URI_TEMPLATE")]
    template: Option<String>,
    /// Values of other arguments already chosen, NAME=VALUE (repeatable).
    #[arg(long = "context", value_name = "NAME=VALUE")]
    context: Vec<String>,
    #[command(flatten)]
    connection: Connection,
}

/// `toolwire listen`.
#[derive(Args, Debug)]
pub(crate) struct ListenArgs {
    /// The server's MCP endpoint, an http:// URL (or use --stdio).
    #[arg(value_name = "URL")]
    url: Option<String>,
    /// Tool list changes (the default is all three list kinds).
    #[arg(long)]
    tools: bool,
    /// Prompt list changes.
    #[arg(long)]
    prompts: bool,
    /// Resource list changes.
    #[arg(long)]
    resources: bool,
    /// Updates of this resource (repeatable).
    #[arg(long = "resource", value_name = "URI")]
    updated: Vec<String>,
    #[command(flatten)]
    connection: Connection,
}

/// Splits `[URL] REST...` by whether `--stdio` is given.
pub(crate) fn target<'a>(
    c: &Connection,
    positional: &'a [String],
) -> (Option<&'a str>, &'a [String]) {
    match (&c.stdio, positional.split_first()) {
        (None, Some((url, rest))) => (Some(url.as_str()), rest),
        _ => (None, positional),
    }
}

/// Runs `f` on a client for the target, closing it afterwards.
async fn with_client<T>(
    url: Option<&str>,
    c: &Connection,
    f: impl AsyncFnOnce(&Client) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let client = connect(url, c, ClientBuilder::new())?;
    let result = super::bounded(c, f(&client)).await;
    super::close(&client, c).await;
    result
}

/// `toolwire resources`: the fixed resources.
pub(crate) async fn resources(a: ListingArgs) -> anyhow::Result<()> {
    let list = with_client(a.url.as_deref(), &a.connection, async |c| {
        c.list_resources().await.context("resources/list failed")
    })
    .await?;
    print(&if a.connection.json {
        render::json(&list)
    } else {
        resource_lines(&list)
    })
}

/// `toolwire templates`: the resource templates.
pub(crate) async fn templates(a: ListingArgs) -> anyhow::Result<()> {
    let list = with_client(a.url.as_deref(), &a.connection, async |c| {
        c.list_resource_templates()
            .await
            .context("resources/templates/list failed")
    })
    .await?;
    print(&if a.connection.json {
        render::json(&list)
    } else {
        template_lines(&list)
    })
}

/// `toolwire prompts`: the prompts and their arguments.
pub(crate) async fn prompts(a: ListingArgs) -> anyhow::Result<()> {
    let list = with_client(a.url.as_deref(), &a.connection, async |c| {
        c.list_prompts().await.context("prompts/list failed")
    })
    .await?;
    print(&if a.connection.json {
        render::json(&list)
    } else {
        prompt_lines(&list)
    })
}

/// `toolwire read URI`: one resource's contents.
pub(crate) async fn read(a: ReadArgs) -> anyhow::Result<()> {
    let (url, rest) = target(&a.connection, &a.positional);
    let [uri] = rest else {
        bail!("which resource? usage: toolwire read <URL | --stdio COMMAND> <URI>");
    };
    let result = with_client(url, &a.connection, async |c| {
        c.read_resource(uri)
            .await
            .with_context(|| format!("reading {uri} failed"))
    })
    .await?;
    if let Some(file) = &a.output {
        return write_contents(&result, file);
    }
    print(&if a.connection.json {
        render::json(&result)
    } else {
        contents(&result)
    })
}

/// `toolwire prompt NAME KEY=VALUE...`: a prompt's messages.
pub(crate) async fn prompt(a: PromptArgs) -> anyhow::Result<()> {
    let (url, rest) = target(&a.connection, &a.positional);
    let Some((name, pairs)) = rest.split_first() else {
        bail!("which prompt? usage: toolwire prompt <URL | --stdio COMMAND> <NAME> [KEY=VALUE]...");
    };
    let mut arguments = BTreeMap::new();
    for pair in pairs {
        let Some((k, v)) = pair.split_once('=') else {
            bail!("prompt argument {pair:?} is not KEY=VALUE");
        };
        arguments.insert(k.to_owned(), v.to_owned());
    }
    let result = with_client(url, &a.connection, async |c| {
        c.get_prompt(name, arguments)
            .await
            .with_context(|| format!("getting prompt {name:?} failed"))
    })
    .await?;
    print(&if a.connection.json {
        render::json(&result)
    } else {
        messages(&result)
    })
}

/// `toolwire complete`: completion values, one per line.
pub(crate) async fn complete(a: CompleteArgs) -> anyhow::Result<()> {
    let (url, rest) = target(&a.connection, &a.positional);
    let [argument] = rest else {
        bail!("what to complete? give ARGUMENT=PARTIAL, for example name=al");
    };
    let Some((name, partial)) = argument.split_once('=') else {
        bail!("{argument:?} is not ARGUMENT=PARTIAL");
    };
    let reference = match (&a.prompt, &a.template) {
        (Some(p), None) => json!({"type": "ref/prompt", "name": p}),
        (None, Some(t)) => json!({"type": "ref/resource", "uri": t}),
        _ => bail!("give --prompt NAME or --template URI_TEMPLATE"),
    };
    let mut context = Map::new();
    for pair in &a.context {
        let Some((k, v)) = pair.split_once('=') else {
            bail!("--context {pair:?} is not NAME=VALUE");
        };
        context.insert(k.to_owned(), Value::from(v));
    }
    let mut params = json!({"ref": reference, "argument": {"name": name, "value": partial}});
    if !context.is_empty() {
        params["context"] = json!({ "arguments": context });
    }
    let params: CompleteRequestParams =
        serde_json::from_value(params).context("building completion/complete")?;
    let result = with_client(url, &a.connection, async |c| {
        c.complete(params)
            .await
            .context("completion/complete failed")
    })
    .await?;
    if a.connection.json {
        return print(&render::json(&result));
    }
    let mut out = String::new();
    for v in &result.completion.values {
        let _ = writeln!(out, "{v}");
    }
    if result.completion.has_more == Some(true) {
        let total = result
            .completion
            .total
            .map_or_else(String::new, |t| format!(" ({t} in all)"));
        let _ = writeln!(out, "…{total}");
    }
    print(&out)
}

/// `toolwire listen`: prints change notifications until interrupted.
pub(crate) async fn listen(a: ListenArgs) -> anyhow::Result<()> {
    let all = !(a.tools || a.prompts || a.resources);
    let filter = SubscriptionFilter {
        tools_list_changed: (all || a.tools).then_some(true),
        prompts_list_changed: (all || a.prompts).then_some(true),
        resources_list_changed: (all || a.resources).then_some(true),
        resource_subscriptions: (!a.updated.is_empty()).then(|| a.updated.clone()),
        task_ids: None,
    };
    // A listen stream is open-ended: no request timeout applies to it.
    let client = connect(a.url.as_deref(), &a.connection, ClientBuilder::new())?;
    let outcome = listen_until_stopped(&client, filter, a.connection.json).await;
    super::close(&client, &a.connection).await;
    outcome
}

async fn listen_until_stopped(
    client: &Client,
    filter: SubscriptionFilter,
    json_lines: bool,
) -> anyhow::Result<()> {
    let mut sub = client
        .listen(filter)
        .await
        .context("opening the subscription failed")?;
    eprintln!(
        "toolwire: listening ({} {}); Ctrl-C to stop",
        client
            .era()
            .map_or_else(|| "?".to_owned(), |e| e.to_string()),
        client.protocol_version()
    );
    let stop = toolwire::shutdown_signal();
    tokio::pin!(stop);
    loop {
        let note = tokio::select! {
            () = &mut stop => return Ok(()),
            note = sub.next() => note,
        };
        match note {
            Some(Ok(n)) => {
                let line = if json_lines {
                    notification_json(&n).to_string()
                } else {
                    notification_text(&n)
                };
                let mut out = std::io::stdout().lock();
                writeln!(out, "{line}")?;
                out.flush()?;
            }
            Some(Err(e)) => return Err(e).context("the subscription ended"),
            // The server closed the subscription gracefully.
            None => return Ok(()),
        }
    }
}

fn notification_text(n: &ChangeNotification) -> String {
    match n {
        ChangeNotification::ToolsListChanged => "tools/list_changed".to_owned(),
        ChangeNotification::PromptsListChanged => "prompts/list_changed".to_owned(),
        ChangeNotification::ResourcesListChanged => "resources/list_changed".to_owned(),
        ChangeNotification::ResourceUpdated { uri } => format!("resources/updated {uri}"),
        ChangeNotification::Other { method, .. } => method.clone(),
        other => format!("{other:?}"),
    }
}

fn notification_json(n: &ChangeNotification) -> Value {
    let method = |m: &str| json!({ "method": format!("notifications/{m}") });
    match n {
        ChangeNotification::ToolsListChanged => method("tools/list_changed"),
        ChangeNotification::PromptsListChanged => method("prompts/list_changed"),
        ChangeNotification::ResourcesListChanged => method("resources/list_changed"),
        ChangeNotification::ResourceUpdated { uri } => {
            json!({"method": "notifications/resources/updated", "params": {"uri": uri}})
        }
        ChangeNotification::Other { method, params } => {
            json!({"method": method, "params": params})
        }
        other => json!({ "method": format!("{other:?}") }),
    }
}

fn described(out: &mut String, head: &str, title: Option<&str>, description: Option<&str>) {
    let title = title.map(|t| format!(" ({t})")).unwrap_or_default();
    let _ = writeln!(out, "{head}{title}");
    for line in description.iter().flat_map(|d| d.lines()) {
        let _ = writeln!(out, "    {line}");
    }
}

fn resource_lines(list: &[Resource]) -> String {
    if list.is_empty() {
        return "(no resources)\n".to_owned();
    }
    let mut out = String::new();
    for r in list {
        let mime = r
            .mime_type
            .as_deref()
            .map(|m| format!(" [{m}]"))
            .unwrap_or_default();
        let head = format!("{}  {}{mime}", r.uri, r.name);
        described(
            &mut out,
            &head,
            r.title.as_deref(),
            r.description.as_deref(),
        );
    }
    out
}

fn template_lines(list: &[ResourceTemplate]) -> String {
    if list.is_empty() {
        return "(no resource templates)\n".to_owned();
    }
    let mut out = String::new();
    for t in list {
        let mime = t
            .mime_type
            .as_deref()
            .map(|m| format!(" [{m}]"))
            .unwrap_or_default();
        let head = format!("{}  {}{mime}", t.uri_template, t.name);
        described(
            &mut out,
            &head,
            t.title.as_deref(),
            t.description.as_deref(),
        );
    }
    out
}

fn prompt_lines(list: &[Prompt]) -> String {
    if list.is_empty() {
        return "(no prompts)\n".to_owned();
    }
    let mut out = String::new();
    for p in list {
        described(
            &mut out,
            &p.name,
            p.title.as_deref(),
            p.description.as_deref(),
        );
        for arg in p.arguments.iter().flatten() {
            let required = if arg.required == Some(true) {
                " (required)"
            } else {
                ""
            };
            let description = arg
                .description
                .as_deref()
                .map(|d| format!(" - {d}"))
                .unwrap_or_default();
            let _ = writeln!(out, "    {}{required}{description}", arg.name);
        }
    }
    out
}

/// A read result: each text as is, blobs summarised; several contents get a
/// header line each.
/// `read -o FILE`: the first contents, raw.
fn write_contents(result: &ReadResourceResult, file: &std::path::Path) -> anyhow::Result<()> {
    let Some(first) = result.contents.first() else {
        bail!("the resource has no contents to write");
    };
    if result.contents.len() > 1 {
        tracing::warn!(
            "the resource has {} contents; writing the first ({})",
            result.contents.len(),
            first.uri()
        );
    }
    let (bytes, mime) = match first {
        ResourceContents::Text(t) => (t.text.clone().into_bytes(), t.mime_type.as_deref()),
        ResourceContents::Blob(b) => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&b.blob)
                .context("the blob is not base64")?;
            (bytes, b.mime_type.as_deref())
        }
    };
    std::fs::write(file, &bytes).with_context(|| format!("cannot write {}", file.display()))?;
    eprintln!(
        "toolwire: wrote {} bytes ({}) to {}",
        bytes.len(),
        mime.unwrap_or("no MIME type"),
        file.display()
    );
    Ok(())
}

fn contents(result: &ReadResourceResult) -> String {
    let mut out = String::new();
    let several = result.contents.len() > 1;
    for c in &result.contents {
        match c {
            ResourceContents::Text(t) => {
                if several {
                    let _ = writeln!(out, "[{}]", t.uri);
                }
                out.push_str(&t.text);
            }
            ResourceContents::Blob(b) => {
                let mime = b.mime_type.as_deref().unwrap_or("application/octet-stream");
                let _ = write!(out, "[{} {mime}, {} base64 bytes]", b.uri, b.blob.len());
            }
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// A prompt's messages, each under its role.
fn messages(result: &GetPromptResult) -> String {
    let mut out = String::new();
    if let Some(d) = &result.description {
        let _ = writeln!(out, "# {d}");
    }
    for m in &result.messages {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let _ = writeln!(out, "{role}:");
        render::block(&mut out, &m.content);
    }
    out
}
