//! MCP Apps, the `io.modelcontextprotocol/ui` extension: tools whose
//! results a host renders with an HTML user interface in a sandboxed
//! iframe.
//!
//! A server registers the interface as a `ui://` resource of MIME type
//! [`APP_MIME_TYPE`] ([`Resource::app`]), and points a tool at it
//! ([`ToolBuilder::ui`](crate::ToolBuilder::ui)). A host that supports the
//! extension reads the resource and renders the tool's results with it; any
//! other client sees an ordinary tool, so a tool with an interface must
//! still answer with meaningful text content. Lists do not vary by client
//! (revision 2026-07-28): a handler that wants to answer differently for a
//! host without the extension asks [`RequestContext::ui`](crate::RequestContext::ui).
//!
//! Spec: ext-apps specification/2026-01-26/apps.mdx
//!
//! # Example
//!
//! ```
//! use toolwire::apps::{Csp, Visibility};
//! use toolwire::{Resource, Server, ServerConfig, Tool};
//!
//! # fn main() -> Result<(), toolwire::RegistrationError> {
//! let page = Resource::app("ui://weather/dashboard", "Weather dashboard")
//!     .csp(Csp::new().connect("https://api.weather.example"))
//!     .prefers_border(true)
//!     .html("<!DOCTYPE html><html><body><div id=\"out\"></div></body></html>")?;
//! let weather = Tool::builder("weather")
//!     .input_schema(serde_json::json!({"type": "object"}))
//!     .ui("ui://weather/dashboard")
//!     .handler(|_args: serde_json::Value, _cx| async { "Sunny, 21 °C" })?;
//! let refresh = Tool::builder("refresh")
//!     .input_schema(serde_json::json!({"type": "object"}))
//!     .ui("ui://weather/dashboard")
//!     .visibility([Visibility::App]) // the page calls it; the model never sees it
//!     .handler(|_args: serde_json::Value, _cx| async { "refreshed" })?;
//! // The resource first: a tool's interface must already be registered.
//! let server = Server::new(ServerConfig::new("weather", "1.0.0"))
//!     .with_resource(page)?
//!     .with_tool(weather)?
//!     .with_tool(refresh)?;
//! # drop(server);
//! # Ok(())
//! # }
//! ```

use crate::handler::{RegistrationError, ResourceProblem};
use crate::resource::Resource;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolwire_proto::types::{ResourceContents, TextResourceContents};

/// The extension's identifier, under `extensions` in capabilities.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML interface.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The deprecated flat key some older hosts read a tool's interface from,
/// written beside `_meta.ui.resourceUri`.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The origins an interface may reach (`_meta.ui.csp`): what a host puts
/// in the iframe's Content Security Policy. Empty lists are the secure
/// default: no connection, no external resource, no nested frame.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Csp {
    /// Origins for `fetch`, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins for scripts, styles, images, fonts and media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins for nested iframes (`frame-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Allowed base URIs (`base-uri`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

impl Csp {
    /// Nothing allowed beyond the host's restrictive default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allows network requests to `origin`.
    #[must_use]
    pub fn connect(mut self, origin: impl Into<String>) -> Self {
        self.connect_domains.push(origin.into());
        self
    }

    /// Allows static resources from `origin` (`https://*.example.com`
    /// covers its subdomains).
    #[must_use]
    pub fn resource(mut self, origin: impl Into<String>) -> Self {
        self.resource_domains.push(origin.into());
        self
    }

    /// Allows nested frames from `origin`.
    #[must_use]
    pub fn frame(mut self, origin: impl Into<String>) -> Self {
        self.frame_domains.push(origin.into());
        self
    }

    /// Allows `origin` as the document's base URI.
    #[must_use]
    pub fn base_uri(mut self, origin: impl Into<String>) -> Self {
        self.base_uri_domains.push(origin.into());
        self
    }
}

/// Browser capabilities an interface asks for (`_meta.ui.permissions`);
/// a host may grant them. On the wire each granted one is an empty object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Permissions {
    /// The camera.
    pub camera: bool,
    /// The microphone.
    pub microphone: bool,
    /// Geolocation.
    pub geolocation: bool,
    /// Writing to the clipboard.
    pub clipboard_write: bool,
}

impl Permissions {
    /// None asked.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for the camera.
    #[must_use]
    pub fn camera(mut self) -> Self {
        self.camera = true;
        self
    }

    /// Asks for the microphone.
    #[must_use]
    pub fn microphone(mut self) -> Self {
        self.microphone = true;
        self
    }

    /// Asks for geolocation.
    #[must_use]
    pub fn geolocation(mut self) -> Self {
        self.geolocation = true;
        self
    }

    /// Asks to write to the clipboard.
    #[must_use]
    pub fn clipboard_write(mut self) -> Self {
        self.clipboard_write = true;
        self
    }

    fn entries(self) -> [(&'static str, bool); 4] {
        [
            ("camera", self.camera),
            ("microphone", self.microphone),
            ("geolocation", self.geolocation),
            ("clipboardWrite", self.clipboard_write),
        ]
    }
}

impl Serialize for Permissions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let map: Map<String, Value> = self
            .entries()
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(k, _)| (k.to_owned(), Value::Object(Map::new())))
            .collect();
        map.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Permissions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        Ok(Self {
            camera: map.contains_key("camera"),
            microphone: map.contains_key("microphone"),
            geolocation: map.contains_key("geolocation"),
            clipboard_write: map.contains_key("clipboardWrite"),
        })
    }
}

/// An interface's `_meta.ui`, on its listing and on its contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UiResourceMeta {
    /// The origins it may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<Csp>,
    /// The browser capabilities it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// A dedicated sandbox origin, in the host's own format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border and background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl UiResourceMeta {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Who may call a tool that has an interface (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model: the tool is in the agent's tool list.
    Model,
    /// The interface, from this server's connection only.
    App,
}

/// A tool's `_meta.ui`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUi {
    /// The `ui://` resource that renders its results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call it; `["model", "app"]` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
}

impl ToolUi {
    /// A tool definition's `_meta.ui`, if it has one (also read from the
    /// deprecated flat `ui/resourceUri`).
    pub fn of(meta: Option<&Map<String, Value>>) -> Option<Self> {
        let meta = meta?;
        let mut ui = meta
            .get("ui")
            .and_then(|v| serde_json::from_value::<Self>(v.clone()).ok())
            .unwrap_or_default();
        if ui.resource_uri.is_none() {
            ui.resource_uri = meta
                .get(LEGACY_RESOURCE_URI_KEY)
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        (ui != Self::default()).then_some(ui)
    }

    /// Whether the model may see and call the tool.
    pub fn for_model(&self) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|v| v.contains(&Visibility::Model))
    }

    /// Whether the interface may call the tool.
    pub fn for_app(&self) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|v| v.contains(&Visibility::App))
    }

    /// The `_meta` entries of this: `ui`, and the deprecated flat key
    /// for older hosts.
    pub(crate) fn write_into(&self, meta: &mut Map<String, Value>) {
        if let Ok(v) = serde_json::to_value(self) {
            meta.insert("ui".into(), v);
        }
        if let Some(uri) = &self.resource_uri {
            meta.insert(LEGACY_RESOURCE_URI_KEY.into(), Value::String(uri.clone()));
        }
    }
}

/// What a client declared of the extension in this request's
/// capabilities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientUi {
    /// The interface MIME types it renders.
    pub mime_types: Vec<String>,
}

impl ClientUi {
    /// Whether it renders HTML apps ([`APP_MIME_TYPE`]).
    pub fn renders_apps(&self) -> bool {
        self.mime_types.iter().any(|m| m == APP_MIME_TYPE)
    }

    pub(crate) fn from_capabilities(
        caps: &toolwire_proto::types::ClientCapabilities,
    ) -> Option<Self> {
        let settings = caps.extensions.as_ref()?.get(UI_EXTENSION)?;
        let mime_types = settings
            .get("mimeTypes")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Some(Self { mime_types })
    }
}

impl crate::RequestContext {
    /// What this request's client declared of MCP Apps (the
    /// `io.modelcontextprotocol/ui` extension), if it did: the interface
    /// MIME types it renders. Lists do not vary by client, so a tool with
    /// an interface answers differently instead when it matters ("one
    /// tool, two answers"). See the [`apps`](crate::apps) module.
    pub fn ui(&self) -> Option<crate::apps::ClientUi> {
        crate::apps::ClientUi::from_capabilities(self.client_capabilities())
    }
}

/// Builds an app's interface; see [`Resource::app`].
#[derive(Debug)]
#[must_use]
pub struct AppResourceBuilder {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    meta: UiResourceMeta,
    listed: bool,
}

impl Resource {
    /// An app's HTML interface at a `ui://` URI, of MIME type
    /// [`APP_MIME_TYPE`]. See the [`apps`](crate::apps) module.
    pub fn app(uri: impl Into<String>, name: impl Into<String>) -> AppResourceBuilder {
        AppResourceBuilder {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            meta: UiResourceMeta::default(),
            listed: true,
        }
    }
}

impl AppResourceBuilder {
    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the interface shows.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The origins it may reach (`_meta.ui.csp`).
    pub fn csp(mut self, csp: Csp) -> Self {
        self.meta.csp = Some(csp);
        self
    }

    /// The browser capabilities it asks for (`_meta.ui.permissions`).
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.meta.permissions = Some(permissions);
        self
    }

    /// A dedicated sandbox origin, in the host's format (`_meta.ui.domain`).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.meta.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background
    /// (`_meta.ui.prefersBorder`).
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.meta.prefers_border = Some(border);
        self
    }

    /// Leaves the interface out of `resources/list` (and its changes):
    /// hosts find it through the tools that name it, and read it all the
    /// same. The spec allows it for an interface only tools use.
    pub fn unlisted(mut self) -> Self {
        self.listed = false;
        self
    }

    /// Finishes the interface with its HTML, sent as text.
    ///
    /// # Errors
    ///
    /// [`RegistrationError::Resource`]: the URI is not a valid `ui://` URI,
    /// the name is empty, or the HTML is not an HTML5 document (it must
    /// begin with `<!DOCTYPE html>`, after any comments and white space).
    pub fn html(self, html: impl Into<String>) -> Result<Resource, RegistrationError> {
        let html: String = html.into();
        self.finish(&html, false)
    }

    /// Finishes the interface with its HTML, sent base64-encoded (`blob`);
    /// the bytes must be UTF-8 HTML. Errors as [`html`](Self::html).
    pub fn html_blob(self, html: impl Into<Vec<u8>>) -> Result<Resource, RegistrationError> {
        let bytes: Vec<u8> = html.into();
        let text = String::from_utf8(bytes).map_err(|_| RegistrationError::Resource {
            uri: self.uri.clone(),
            problem: ResourceProblem::NotHtml("it is not UTF-8 text"),
        })?;
        self.finish(&text, true)
    }

    fn finish(self, html: &str, blob: bool) -> Result<Resource, RegistrationError> {
        let refuse = |problem| RegistrationError::Resource {
            uri: self.uri.clone(),
            problem,
        };
        if !self.uri.starts_with("ui://") || self.uri.len() == "ui://".len() {
            return Err(refuse(ResourceProblem::NotUiUri));
        }
        check_html(html).map_err(|why| refuse(ResourceProblem::NotHtml(why)))?;
        let mut listing = Map::new();
        if !self.meta.is_empty()
            && let Ok(v) = serde_json::to_value(&self.meta)
        {
            listing.insert("ui".into(), v);
        }
        let content_meta = (!listing.is_empty()).then(|| listing.clone());
        let uri = self.uri.clone();
        let mut builder = Resource::builder(self.uri, self.name).mime_type(APP_MIME_TYPE);
        if let Some(t) = self.title {
            builder = builder.title(t);
        }
        if let Some(d) = self.description {
            builder = builder.description(d);
        }
        if let Some(m) = &content_meta {
            builder = builder.meta(m.clone());
        }
        if !self.listed {
            builder = builder.unlisted();
        }
        let contents = if blob {
            use base64::Engine as _;
            ResourceContents::Blob(toolwire_proto::types::BlobResourceContents {
                uri,
                blob: base64::engine::general_purpose::STANDARD.encode(html),
                mime_type: Some(APP_MIME_TYPE.into()),
                meta: content_meta,
            })
        } else {
            ResourceContents::Text(TextResourceContents {
                uri,
                text: html.to_owned(),
                mime_type: Some(APP_MIME_TYPE.into()),
                meta: content_meta,
            })
        };
        let contents = std::sync::Arc::new(contents);
        builder.handler(move |_cx| {
            let contents = std::sync::Arc::clone(&contents);
            async move { vec![(*contents).clone()] }
        })
    }
}

/// Checks that `html` is an HTML5 document: `<!DOCTYPE html>` first,
/// after a byte-order mark, white space and comments.
fn check_html(html: &str) -> Result<(), &'static str> {
    let mut rest = html.trim_start_matches('\u{feff}').trim_start();
    while let Some(after) = rest.strip_prefix("<!--") {
        let end = after.find("-->").ok_or("a comment is not closed")?;
        rest = after[end + 3..].trim_start();
    }
    if !starts_doctype(rest) {
        return Err("an HTML5 document begins with <!DOCTYPE html>");
    }
    let body = &rest[rest.find('>').map_or(rest.len(), |i| i + 1)..];
    let has_element = body
        .split('<')
        .skip(1)
        .any(|tag| tag.chars().next().is_some_and(|c| c.is_ascii_alphabetic()));
    if !has_element {
        return Err("it has no element after its <!DOCTYPE html>");
    }
    Ok(())
}

/// `<!DOCTYPE html` followed by white space or `>`, in any case.
fn starts_doctype(text: &str) -> bool {
    let Some(head) = text.get(..14) else {
        return false;
    };
    head.eq_ignore_ascii_case("<!doctype html")
        && text[14..]
            .chars()
            .next()
            .is_some_and(|c| c == '>' || c.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn html5_documents_pass_and_fragments_do_not() {
        for ok in [
            "<!DOCTYPE html><html><body></body></html>",
            "\u{feff}  <!-- app --> <!doctype HTML>\n<html lang=\"en\"></html>",
            "<!DOCTYPE html >\n<head><title>x</title></head>",
        ] {
            assert_eq!(check_html(ok), Ok(()), "{ok}");
        }
        for bad in [
            "<div>hi</div>",
            "<!DOCTYPE htmlx><html></html>",
            "<!-- open <!DOCTYPE html><html></html>",
            "<!DOCTYPE html>just text",
            "<!DOCTYPE html>a < b",
            "",
        ] {
            assert!(check_html(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn permissions_are_empty_objects_on_the_wire() {
        let p = Permissions::new().camera().clipboard_write();
        assert_eq!(
            serde_json::to_value(p).unwrap(),
            json!({"camera": {}, "clipboardWrite": {}})
        );
        let back: Permissions =
            serde_json::from_value(json!({"geolocation": {}, "camera": {}})).unwrap();
        assert_eq!(back, Permissions::new().camera().geolocation());
    }

    #[test]
    fn a_tools_ui_reads_from_either_key_and_defaults_to_both_audiences() {
        let mut meta = Map::new();
        ToolUi {
            resource_uri: Some("ui://a/b".into()),
            visibility: Some(vec![Visibility::App]),
        }
        .write_into(&mut meta);
        assert_eq!(
            Value::Object(meta.clone()),
            json!({"ui": {"resourceUri": "ui://a/b", "visibility": ["app"]}, "ui/resourceUri": "ui://a/b"})
        );
        let ui = ToolUi::of(Some(&meta)).unwrap();
        assert!(ui.for_app() && !ui.for_model());
        let flat = json!({"ui/resourceUri": "ui://old"});
        let ui = ToolUi::of(flat.as_object()).unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://old"));
        assert!(ui.for_app() && ui.for_model());
        assert!(ToolUi::of(json!({"other": 1}).as_object()).is_none());
    }
}
