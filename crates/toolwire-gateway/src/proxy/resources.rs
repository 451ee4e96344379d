//! The gateway's copies of an upstream's resources and resource templates
//! under reversible URIs (`gateway://<prefix>/<upstream URI>`; an app
//! interface `ui://<rest>` as `ui://<prefix>/<rest>`, still a `ui://` URI),
//! and completion routed to the upstream that owns the prompt or template.

use super::{failure, options, relay_input, relay_state};
use crate::upstream::Link;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use toolwire::proto::types::{
    CompleteRequest, Completion, ReadResourceRequest, ReadResourceRequestParams,
    Resource as ResourceDefinition, ResourceContents, ResourceTemplate as TemplateDefinition,
    ResultOrInputRequired,
};
use toolwire::{
    Completer, CompletionRequest, HandlerError, HandlerOutput, RegistrationError, RequestContext,
    Resource, ResourceTemplate,
};

/// How upstream URIs are exposed: `gateway://<prefix>/` in front, or
/// nothing (`namespace = "never"`). An MCP Apps interface stays a `ui://`
/// URI, which hosts require: `ui://<rest>` is exposed as
/// `ui://<prefix>/<rest>`. Both forms round-trip: the prefix is the
/// exposed URI's first segment, and a prefix holds no `/`.
#[derive(Debug, Clone)]
pub(crate) struct UriSpace {
    pub(crate) front: Arc<str>,
    /// `ui://<prefix>/`, or nothing.
    ui_front: Arc<str>,
}

const UI: &str = "ui://";

impl UriSpace {
    pub(crate) fn new(prefix: Option<&str>) -> Self {
        Self {
            front: prefix.map_or_else(|| "".into(), |p| format!("gateway://{p}/").into()),
            ui_front: prefix.map_or_else(|| "".into(), |p| format!("{UI}{p}/").into()),
        }
    }

    pub(crate) fn expose(&self, uri: &str) -> String {
        match uri.strip_prefix(UI) {
            Some(rest) if !self.ui_front.is_empty() => format!("{}{rest}", self.ui_front),
            _ => format!("{}{uri}", self.front),
        }
    }

    /// The upstream's URI of an exposed one.
    pub(crate) fn upstream<'a>(&self, exposed: &'a str) -> Option<std::borrow::Cow<'a, str>> {
        if !self.ui_front.is_empty()
            && let Some(rest) = exposed.strip_prefix(&*self.ui_front)
        {
            return Some(format!("{UI}{rest}").into());
        }
        exposed.strip_prefix(&*self.front).map(Into::into)
    }
}

/// The gateway's copy of a fixed resource.
pub(crate) fn resource(
    link: &Arc<Link>,
    def: &ResourceDefinition,
    space: &UriSpace,
) -> Result<Resource, RegistrationError> {
    let mut b = Resource::builder(space.expose(&def.uri), &def.name);
    if let Some(t) = &def.title {
        b = b.title(t);
    }
    if let Some(d) = &def.description {
        b = b.description(d);
    }
    if let Some(m) = &def.mime_type {
        b = b.mime_type(m);
    }
    if let Some(a) = &def.annotations {
        b = b.annotations(a.clone());
    }
    if let Some(size) = def.size {
        b = b.size(size);
    }
    // The interface's `_meta.ui` (its CSP, permissions) goes with it.
    if let Some(meta) = &def.meta {
        b = b.meta(meta.clone());
    }
    let link = Arc::clone(link);
    let space = space.clone();
    let uri: Arc<str> = def.uri.as_str().into();
    b.handler(move |cx: RequestContext| {
        let link = Arc::clone(&link);
        let space = space.clone();
        let uri = Arc::clone(&uri);
        async move { read(&link, &space, &uri, &cx).await }
    })
}

/// The gateway's copy of a resource template, completing its variables
/// through the upstream when it offers completion.
pub(crate) fn template(
    link: &Arc<Link>,
    def: &TemplateDefinition,
    space: &UriSpace,
    completes: bool,
) -> Result<ResourceTemplate, RegistrationError> {
    let exposed = space.expose(&def.uri_template);
    let mut b = ResourceTemplate::builder(&exposed, &def.name);
    if let Some(t) = &def.title {
        b = b.title(t);
    }
    if let Some(d) = &def.description {
        b = b.description(d);
    }
    if let Some(m) = &def.mime_type {
        b = b.mime_type(m);
    }
    if completes && let Ok(parsed) = toolwire::UriTemplate::parse(&def.uri_template) {
        for var in parsed.variables() {
            let reference = json!({"type": "ref/resource", "uri": def.uri_template});
            b = b.complete(var, completer(link, reference));
        }
    }
    let link = Arc::clone(link);
    let space = space.clone();
    b.handler(move |vars: toolwire::UriVariables, cx: RequestContext| {
        let link = Arc::clone(&link);
        let space = space.clone();
        async move {
            let Some(uri) = space.upstream(vars.uri()).map(std::borrow::Cow::into_owned) else {
                return Err(HandlerError::NotFound);
            };
            read(&link, &space, &uri, &cx).await
        }
    })
}

async fn read(
    link: &Link,
    space: &UriSpace,
    uri: &str,
    cx: &RequestContext,
) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
    let state = relay_state(link, cx)?;
    let Some(client) = link.client() else {
        return Err(HandlerError::failed(link.down_reason()));
    };
    let params = ReadResourceRequestParams {
        uri: uri.to_owned(),
        input_responses: cx.input_responses().cloned(),
        request_state: state,
        meta: None,
    };
    let options = options(link, cx).await?;
    let outcome = tokio::select! {
        r = client.request_once::<ReadResourceRequest>(params, options) => r,
        () = cx.cancelled() => return Err(HandlerError::failed("cancelled")),
    };
    match outcome {
        Ok(ResultOrInputRequired::Complete(result)) => Ok(HandlerOutput::Complete(
            result
                .contents
                .into_iter()
                .map(|c| expose_contents(space, c))
                .collect(),
        )),
        Ok(ResultOrInputRequired::InputRequired(ir)) => {
            Ok(HandlerOutput::InputRequired(relay_input(link, ir)))
        }
        Err(e) => Err(HandlerError::failed(failure(link, &client, e)?)),
    }
}

/// The gateway's copy of an app interface a tool names but its upstream
/// does not list: left out of the gateway's list too, read through.
pub(crate) fn unlisted_interface(
    link: &Arc<Link>,
    uri: &str,
    space: &UriSpace,
) -> Result<Resource, RegistrationError> {
    let link = Arc::clone(link);
    let space = space.clone();
    let upstream: Arc<str> = uri.into();
    Resource::builder(space.expose(uri), uri)
        .mime_type(toolwire::apps::APP_MIME_TYPE)
        .unlisted()
        .handler(move |cx: RequestContext| {
            let link = Arc::clone(&link);
            let space = space.clone();
            let uri = Arc::clone(&upstream);
            async move { read(&link, &space, &uri, &cx).await }
        })
}

/// Contents under their exposed URI, so a client can read them again.
fn expose_contents(space: &UriSpace, contents: ResourceContents) -> ResourceContents {
    match contents {
        ResourceContents::Text(mut t) => {
            t.uri = space.expose(&t.uri);
            ResourceContents::Text(t)
        }
        ResourceContents::Blob(mut b) => {
            b.uri = space.expose(&b.uri);
            ResourceContents::Blob(b)
        }
    }
}

/// A completer that asks the upstream, for `reference` (its own prompt
/// name or URI template). An upstream that fails offers nothing.
pub(crate) fn completer(link: &Arc<Link>, reference: serde_json::Value) -> Completer {
    let link = Arc::clone(link);
    Completer::new(move |req: CompletionRequest, cx: RequestContext| {
        let link = Arc::clone(&link);
        let reference = reference.clone();
        async move {
            let Some(client) = link.client() else {
                return Err(toolwire::proto::ErrorObject::internal(link.down_reason()));
            };
            let context: BTreeMap<String, String> = req.context;
            let params = serde_json::from_value(json!({
                "ref": reference,
                "argument": {"name": req.argument, "value": req.value},
                "context": {"arguments": context},
            }))
            .map_err(|e| toolwire::proto::ErrorObject::internal(e.to_string()))?;
            let options = options(&link, &cx)
                .await
                .map_err(|e| toolwire::proto::ErrorObject::internal(e.to_string()))?;
            match client.request::<CompleteRequest>(params, options).await {
                Ok(r) => Ok::<Completion, toolwire::proto::ErrorObject>(r.completion),
                Err(e) => match e.rpc() {
                    Some(rpc) => Err(rpc.clone()),
                    None => Err(toolwire::proto::ErrorObject::internal(format!(
                        "upstream {:?} failed: {e}",
                        link.name()
                    ))),
                },
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::UriSpace;

    #[test]
    fn exposed_uris_round_trip_and_app_interfaces_stay_ui_uris() {
        let space = UriSpace::new(Some("charts"));
        for (upstream, exposed) in [
            ("ui://line/view", "ui://charts/line/view"),
            ("ui://x", "ui://charts/x"),
            ("file:///a/b.txt", "gateway://charts/file:///a/b.txt"),
            (
                "gateway://other/ui://x",
                "gateway://charts/gateway://other/ui://x",
            ),
        ] {
            assert_eq!(space.expose(upstream), exposed);
            assert_eq!(space.upstream(exposed).as_deref(), Some(upstream));
        }
        // Another upstream's URIs are not this one's.
        assert_eq!(space.upstream("ui://maps/x"), None);
        assert_eq!(space.upstream("gateway://maps/ui://x"), None);
        // namespace = "never": as they are.
        let bare = UriSpace::new(None);
        assert_eq!(bare.expose("ui://line/view"), "ui://line/view");
        assert_eq!(
            bare.upstream("ui://line/view").as_deref(),
            Some("ui://line/view")
        );
    }
}
