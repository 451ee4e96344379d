//! `toolwire host-config claude|vscode|cursor`: the JSON snippet that puts
//! a server into an MCP host's configuration file.
//!
//! The formats, as the hosts document them:
//! - Claude Desktop, `claude_desktop_config.json`:
//!   `{"mcpServers": {NAME: {"command", "args", "env"}}}`, stdio only
//!   (remote servers are added in the app, under Settings > Connectors);
//!   <https://modelcontextprotocol.io/docs/develop/connect-local-servers>.
//! - VS Code, `.vscode/mcp.json` or the user profile's `mcp.json`:
//!   `{"servers": {NAME: {"type": "stdio", "command", "args", "env"}}}` or
//!   `{"type": "http", "url", "headers"}`;
//!   <https://code.visualstudio.com/docs/copilot/reference/mcp-configuration>.
//! - Cursor, `~/.cursor/mcp.json` or a project's `.cursor/mcp.json`:
//!   `{"mcpServers": {NAME: {"command", "args", "env"}}}` or
//!   `{"url", "headers"}`; <https://cursor.com/docs/mcp>.

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use std::fmt::Write as _;
use std::path::Path;

/// The hosts `host-config` writes for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Host {
    /// Claude Desktop (claude_desktop_config.json).
    Claude,
    /// VS Code (.vscode/mcp.json).
    Vscode,
    /// Cursor (~/.cursor/mcp.json).
    Cursor,
}

impl Host {
    /// Where the snippet goes, for the line on stderr.
    fn file(self) -> &'static str {
        match self {
            Self::Claude => {
                "claude_desktop_config.json (Settings > Developer > Edit Config; on macOS \
                 ~/Library/Application Support/Claude/, on Windows %APPDATA%\\Claude\\)"
            }
            Self::Vscode => {
                ".vscode/mcp.json in the workspace, or the user profile's mcp.json \
                 (command MCP: Open User Configuration)"
            }
            Self::Cursor => "~/.cursor/mcp.json, or .cursor/mcp.json in a project",
        }
    }
}

/// The long help of `host-config`: the formats and where they are documented.
pub(crate) const LONG_ABOUT: &str = "\
Print the JSON that adds a server to an MCP host's configuration file.

Give the command that starts a stdio server after `--`, or --url for a
Streamable HTTP server. The JSON goes to stdout; where to put it goes to
stderr. Merge the entry into the file's existing object if it has one.

A command given as a relative path (target/release/my-server) is written
as an absolute path: hosts start servers in a directory of their own.

Formats, as documented by each host:
  claude  claude_desktop_config.json: {\"mcpServers\": {NAME: {\"command\",
          \"args\", \"env\"}}}; stdio only (add a remote server in the app,
          Settings > Connectors).
          https://modelcontextprotocol.io/docs/develop/connect-local-servers
  vscode  .vscode/mcp.json: {\"servers\": {NAME: {\"type\": \"stdio\", \"command\",
          \"args\", \"env\"}}} or {\"type\": \"http\", \"url\", \"headers\"}.
          https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
  cursor  ~/.cursor/mcp.json: {\"mcpServers\": {NAME: {\"command\", \"args\",
          \"env\"}}} or {\"url\", \"headers\"}.
          https://cursor.com/docs/mcp

Examples:
  toolwire host-config claude -- /path/to/my-server --verbose
  toolwire host-config vscode --name demo --env API_KEY=secret -- toolwire serve
  toolwire host-config cursor --url http://127.0.0.1:8080/mcp";

/// `toolwire host-config`.
#[derive(Args, Debug)]
#[command(
    override_usage = "toolwire host-config <claude|vscode|cursor> [OPTIONS] -- <COMMAND>...\n       \
                      toolwire host-config <vscode|cursor> [OPTIONS] --url <URL>"
)]
pub(crate) struct HostConfigArgs {
    /// The host whose configuration file the snippet is for.
    host: Host,
    /// The server's name in the host's list (default: the command's file
    /// name, or the URL's host).
    #[arg(long)]
    name: Option<String>,
    /// A Streamable HTTP server's URL, instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// An environment variable for the stdio server (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = crate::client_cmd::checks::env, conflicts_with = "url")]
    envs: Vec<(String, String)>,
    /// An HTTP header for the --url server, "Name: value" (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = crate::client_cmd::checks::header, requires = "url")]
    headers: Vec<(String, String)>,
    /// The command that starts the stdio server, and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// `toolwire host-config`: prints the snippet, says where it goes.
pub(crate) fn run(a: HostConfigArgs) -> anyhow::Result<()> {
    let (name, entry) = match (&a.url, a.command.split_first()) {
        (Some(url), _) => {
            if a.host == Host::Claude {
                bail!(
                    "Claude Desktop's configuration file takes stdio servers only: add a \
                     Streamable HTTP server in the app (Settings > Connectors), or give the \
                     command that starts the server after `--`"
                );
            }
            let host = url_host(url)?;
            let name = a.name.clone().unwrap_or_else(|| host.to_owned());
            (name, http_entry(a.host, url, &a.headers))
        }
        (None, Some((program, args))) => {
            let program = absolute_command(program)?;
            let name = match &a.name {
                Some(name) => name.clone(),
                None => Path::new(&program)
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("server")
                    .to_owned(),
            };
            (name, stdio_entry(a.host, &program, args, &a.envs))
        }
        (None, None) => bail!(
            "which server? give the command that starts it after `--` (toolwire host-config \
             claude -- /path/to/server), or --url URL"
        ),
    };
    anyhow::ensure!(!name.is_empty(), "--name must not be empty");
    crate::client_cmd::print(&snippet(a.host, &name, entry))?;
    eprintln!(
        "toolwire: add the \"{name}\" entry to {}, then restart the host",
        a.host.file()
    );
    Ok(())
}

/// A JSON value whose object members keep the order they are given in
/// (serde_json's maps sort them): an entry reads `type`, `command`,
/// `args`, `env`, as the hosts' documentation writes it.
enum Json {
    String(String),
    Array(Vec<String>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Pretty-printed, two spaces an indent, as `serde_json` would.
    fn write(&self, out: &mut String, depth: usize) {
        let quoted = |s: &str| serde_json::Value::from(s).to_string();
        let pad = |depth: usize| "  ".repeat(depth);
        match self {
            Self::String(s) => out.push_str(&quoted(s)),
            Self::Array(items) if items.is_empty() => out.push_str("[]"),
            Self::Array(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    let comma = if i + 1 < items.len() { "," } else { "" };
                    let _ = writeln!(out, "{}{}{comma}", pad(depth + 1), quoted(item));
                }
                let _ = write!(out, "{}]", pad(depth));
            }
            Self::Object(members) if members.is_empty() => out.push_str("{}"),
            Self::Object(members) => {
                out.push_str("{\n");
                for (i, (key, value)) in members.iter().enumerate() {
                    let _ = write!(out, "{}{}: ", pad(depth + 1), quoted(key));
                    value.write(out, depth + 1);
                    out.push_str(if i + 1 < members.len() { ",\n" } else { "\n" });
                }
                let _ = write!(out, "{}}}", pad(depth));
            }
        }
    }
}

/// `pairs` as a JSON object of strings.
fn object(pairs: &[(String, String)]) -> Json {
    Json::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
            .collect(),
    )
}

/// The whole snippet for `host`: its list of servers with the one entry,
/// ending in a newline.
fn snippet(host: Host, name: &str, entry: Json) -> String {
    let list = match host {
        Host::Vscode => "servers",
        Host::Claude | Host::Cursor => "mcpServers",
    };
    let snippet = Json::Object(vec![(
        list.to_owned(),
        Json::Object(vec![(name.to_owned(), entry)]),
    )]);
    let mut text = String::new();
    snippet.write(&mut text, 0);
    text.push('\n');
    text
}

/// The snippet `host-config claude --name NAME -- PROGRAM` prints.
pub(crate) fn claude_snippet(name: &str, program: &str) -> String {
    snippet(
        Host::Claude,
        name,
        stdio_entry(Host::Claude, program, &[], &[]),
    )
}

/// The entry of a stdio server.
fn stdio_entry(host: Host, program: &str, args: &[String], envs: &[(String, String)]) -> Json {
    let mut entry = Vec::new();
    if host == Host::Vscode {
        entry.push(("type".to_owned(), Json::String("stdio".into())));
    }
    entry.push(("command".to_owned(), Json::String(program.to_owned())));
    entry.push(("args".to_owned(), Json::Array(args.to_vec())));
    if !envs.is_empty() {
        entry.push(("env".to_owned(), object(envs)));
    }
    Json::Object(entry)
}

/// The entry of a Streamable HTTP server.
fn http_entry(host: Host, url: &str, headers: &[(String, String)]) -> Json {
    let mut entry = Vec::new();
    if host == Host::Vscode {
        entry.push(("type".to_owned(), Json::String("http".into())));
    }
    entry.push(("url".to_owned(), Json::String(url.to_owned())));
    if !headers.is_empty() {
        entry.push(("headers".to_owned(), object(headers)));
    }
    Json::Object(entry)
}

/// The host of an `http://` or `https://` URL.
fn url_host(url: &str) -> anyhow::Result<&str> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .with_context(|| format!("--url {url:?}: expected an http:// or https:// URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    anyhow::ensure!(!host.is_empty(), "--url {url:?} has no host");
    Ok(host)
}

/// `program` as the host should run it: a path with a directory in it
/// made absolute (hosts start servers in a directory of their own), a bare
/// name (found on the host's PATH) as it is.
fn absolute_command(program: &str) -> anyhow::Result<String> {
    let path = Path::new(program);
    if path.is_absolute() || path.components().count() < 2 {
        return Ok(program.to_owned());
    }
    let absolute = std::path::absolute(path)
        .with_context(|| format!("cannot make {program:?} an absolute path"))?;
    if !absolute.exists() {
        eprintln!(
            "toolwire: warning: {} does not exist (yet?)",
            absolute.display()
        );
    }
    absolute
        .into_os_string()
        .into_string()
        .map_err(|p| anyhow::anyhow!("{} is not UTF-8", p.display()))
}

#[cfg(test)]
mod tests {
    use super::{Json, url_host};

    #[test]
    fn json_keeps_member_order_and_escapes() {
        let v = Json::Object(vec![
            ("z".into(), Json::String("a \"q\" \\ \n".into())),
            ("a".into(), Json::Array(vec!["x".into(), "y".into()])),
            ("e".into(), Json::Array(vec![])),
            ("o".into(), Json::Object(vec![])),
        ]);
        let mut text = String::new();
        v.write(&mut text, 0);
        assert_eq!(
            text,
            "{\n  \"z\": \"a \\\"q\\\" \\\\ \\n\",\n  \"a\": [\n    \"x\",\n    \"y\"\n  ],\n  \"e\": [],\n  \"o\": {}\n}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(parsed["z"], "a \"q\" \\ \n");
    }

    #[test]
    fn url_hosts() {
        assert_eq!(
            url_host("http://127.0.0.1:8080/mcp").ok(),
            Some("127.0.0.1")
        );
        assert_eq!(
            url_host("https://u:p@example.com/x").ok(),
            Some("example.com")
        );
        assert_eq!(url_host("http://[::1]:3000/mcp").ok(), Some("::1"));
        assert!(url_host("ftp://x").is_err());
        assert!(url_host("http:///mcp").is_err());
    }
}
