//! The gateway's copies of an upstream's resources and resource templates
//! under reversible URIs (`gateway://<prefix>/<upstream URI>`), and
//! completion routed to the upstream that owns the prompt or template.

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
/// nothing (`namespace = "never"`).
#[derive(Debug, Clone)]
pub(crate) struct UriSpace {
    pub(crate) front: Arc<str>,
}

impl UriSpace {
    pub(crate) fn new(prefix: Option<&str>) -> Self {
        Self {
            front: prefix.map_or_else(|| "".into(), |p| format!("gateway://{p}/").into()),
        }
    }

    pub(crate) fn expose(&self, uri: &str) -> String {
        format!("{}{uri}", self.front)
    }

    /// The upstream's URI of an exposed one.
    pub(crate) fn upstream<'a>(&self, exposed: &'a str) -> Option<&'a str> {
        exposed.strip_prefix(&*self.front)
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
            let Some(uri) = space.upstream(vars.uri()).map(str::to_owned) else {
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
