//! `resources/list`, `resources/templates/list` and `resources/read`, and
//! the resource registries' side of [`Server`].

use super::accept::Prepared;
use super::outcome::{Outcome, RpcError};
use super::{Server, paging};
use crate::bus::ListChanged;
use crate::context::{Outbound, RequestContext};
use crate::handler::{EntryKind, HandlerError, HandlerOutput, RegistrationError};
use crate::registry::Named;
use crate::resource::{Reader, Resource, ResourceTemplate, UriVariables, not_found};
use serde_json::Value;
use std::collections::BTreeMap;
use tokio_util::sync::CancellationToken;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequest, ReadResourceResult,
    ResourceContents, ResultType,
};

impl Named for Resource {
    fn name(&self) -> &str {
        self.uri()
    }
}

impl Named for ResourceTemplate {
    fn name(&self) -> &str {
        self.uri_template()
    }
}

impl Server {
    /// Registers a resource, failing if its URI is taken. Publishes
    /// [`ListChanged::Resources`].
    pub fn add_resource(&self, resource: Resource) -> Result<(), RegistrationError> {
        let uri = resource.uri().to_owned();
        if !self.register(&self.inner.resources, resource, ListChanged::Resources) {
            return Err(RegistrationError::Duplicate {
                kind: EntryKind::Resource,
                name: uri,
            });
        }
        Ok(())
    }

    /// Builder-style [`add_resource`](Self::add_resource).
    pub fn with_resource(self, resource: Resource) -> Result<Self, RegistrationError> {
        self.add_resource(resource)?;
        Ok(self)
    }

    /// Removes the resource at `uri`; `true` if it existed. Publishes
    /// [`ListChanged::Resources`].
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.unregister(&self.inner.resources, uri, ListChanged::Resources)
    }

    /// URIs of the registered resources, in order.
    pub fn resource_uris(&self) -> Vec<String> {
        self.inner.resources.names()
    }

    /// Registers a resource template, failing if its URI template is taken.
    /// Publishes [`ListChanged::Resources`] (templates are part of the
    /// resource list).
    pub fn add_resource_template(
        &self,
        template: ResourceTemplate,
    ) -> Result<(), RegistrationError> {
        let uri = template.uri_template().to_owned();
        if !self.register(
            &self.inner.resource_templates,
            template,
            ListChanged::Resources,
        ) {
            return Err(RegistrationError::Duplicate {
                kind: EntryKind::ResourceTemplate,
                name: uri,
            });
        }
        Ok(())
    }

    /// Replaces every fixed resource and every resource template at once
    /// (see [`replace_tools`](Self::replace_tools)). Publishes
    /// [`ListChanged::Resources`]; on a duplicate URI or URI template
    /// nothing changes.
    pub fn replace_resources(
        &self,
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
    ) -> Result<(), RegistrationError> {
        // Check both before changing either, so an error changes nothing.
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = templates.iter().find(|t| !seen.insert(t.uri_template())) {
            return Err(RegistrationError::Duplicate {
                kind: EntryKind::ResourceTemplate,
                name: dup.uri_template().to_owned(),
            });
        }
        self.inner
            .resources
            .replace(resources)
            .map_err(|name| RegistrationError::Duplicate {
                kind: EntryKind::Resource,
                name,
            })?;
        // Unique, checked above.
        let _ = self.inner.resource_templates.replace(templates);
        self.publish(ListChanged::Resources.into());
        Ok(())
    }

    /// Builder-style [`add_resource_template`](Self::add_resource_template).
    pub fn with_resource_template(
        self,
        template: ResourceTemplate,
    ) -> Result<Self, RegistrationError> {
        self.add_resource_template(template)?;
        Ok(self)
    }

    /// Removes the template registered as `uri_template`; `true` if it
    /// existed. Publishes [`ListChanged::Resources`].
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.unregister(
            &self.inner.resource_templates,
            uri_template,
            ListChanged::Resources,
        )
    }

    /// URI templates of the registered resource templates, in order.
    pub fn resource_template_uris(&self) -> Vec<String> {
        self.inner.resource_templates.names()
    }

    pub(crate) fn list_resources(&self, p: &Prepared) -> Outcome {
        let snapshot = self.inner.resources.snapshot();
        let cursor = p.params.cursor.as_deref();
        let build = |items: &[Resource], next_cursor, cache_scope, meta| ListResourcesResult {
            result_type: ResultType::Complete,
            // An app's interface may be left out: hosts find it through
            // the tools that name it. Spec (ext-apps): apps.mdx#behavior
            resources: items
                .iter()
                .filter(|r| r.is_listed())
                .map(|r| r.definition().clone())
                .collect(),
            next_cursor,
            ttl_ms: self.ttl_ms(),
            cache_scope,
            meta: Some(meta),
        };
        paging::list_page(self, p, &snapshot, cursor, build)
    }

    pub(crate) fn list_resource_templates(&self, p: &Prepared) -> Outcome {
        let snapshot = self.inner.resource_templates.snapshot();
        let cursor = p.params.cursor.as_deref();
        let build = |items: &[ResourceTemplate], next_cursor, cache_scope, meta| {
            ListResourceTemplatesResult {
                result_type: ResultType::Complete,
                resource_templates: items.iter().map(|t| t.definition().clone()).collect(),
                next_cursor,
                ttl_ms: self.ttl_ms(),
                cache_scope,
                meta: Some(meta),
            }
        };
        paging::list_page(self, p, &snapshot, cursor, build)
    }

    /// The reader for `uri`: the fixed resource with that URI, else the
    /// first template (in registration order) that matches it.
    fn find_reader(&self, uri: &str) -> Option<(Reader, UriVariables)> {
        if let Some(r) = self.inner.resources.snapshot().get(uri) {
            return Some((
                r.inner.reader.clone(),
                UriVariables::new(uri, BTreeMap::new()),
            ));
        }
        let templates = self.inner.resource_templates.snapshot();
        templates.items().iter().find_map(|t| {
            t.inner
                .template
                .match_uri(uri)
                .map(|values| (t.inner.reader.clone(), UriVariables::new(uri, values)))
        })
    }

    pub(crate) async fn read_resource(
        &self,
        mut p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Outcome {
        let id = p.id.clone();
        let shape = p.era.shape();
        let Some(uri) = p.params.uri.take() else {
            return Outcome::error(ErrorObject::invalid_params(
                "resources/read needs params.uri",
            ));
        };
        // Spec: server/resources.mdx#error-handling — an unknown resource is
        // -32602 with the URI, never an empty `contents`.
        let Some((reader, vars)) = self.find_reader(&uri) else {
            return missing(&uri);
        };
        let (round, input) =
            match self.begin_round::<ReadResourceRequest>(&mut p, &uri, &Value::Null) {
                Ok(r) => r,
                Err(outcome) => return outcome,
            };
        let cx = RequestContext::new(id.clone(), p.meta, cancel, outbound)
            .with_caller_token(p.who.caller_token())
            .with_principal(p.who.into_principal())
            .with_round(input);
        let outcome = (reader.handler)(vars, cx.clone()).await;
        cx.finish();
        match outcome {
            Ok(HandlerOutput::InputRequired(ir)) => {
                self.input_required(round, ir, &uri, &Value::Null)
            }
            Ok(HandlerOutput::Complete(mut contents)) => {
                for c in &mut contents {
                    let (c_uri, c_mime) = match c {
                        ResourceContents::Text(t) => (&mut t.uri, &mut t.mime_type),
                        ResourceContents::Blob(b) => (&mut b.uri, &mut b.mime_type),
                    };
                    if c_uri.is_empty() {
                        c_uri.clone_from(&uri);
                    }
                    if c_mime.is_none() {
                        c_mime.clone_from(&reader.mime_type);
                    }
                }
                self.respond(
                    shape,
                    &id,
                    &ReadResourceResult {
                        result_type: ResultType::Complete,
                        contents,
                        ttl_ms: reader.ttl_ms.unwrap_or_else(|| self.ttl_ms()),
                        cache_scope: reader.cache_scope.unwrap_or_else(|| self.cache_scope()),
                        meta: Some(self.result_meta()),
                    },
                )
            }
            Err(HandlerError::NotFound) => missing(&uri),
            Err(e) => Outcome::error(e.into_error_object()),
        }
    }
}

/// "Resource not found": `-32602` with the URI, which the legacy era
/// writes as `-32002`.
fn missing(uri: &str) -> Outcome {
    Outcome::Error(Box::new(RpcError::ResourceNotFound(not_found(uri))))
}

#[cfg(test)]
mod tests {
    use crate::resource::UriVariables;
    use crate::server::completion::support::call;
    use crate::{HandlerError, Resource, ResourceTemplate, Server, ServerConfig};
    use serde_json::json;
    use std::time::Duration;
    use toolwire_proto::types::{CacheScope, ResourceContents, TextResourceContents};

    fn server() -> Server {
        let s = Server::new(ServerConfig::new("t", "1").with_page_size(2));
        s.add_resource(
            Resource::builder("test://static-text", "static-text")
                .mime_type("text/plain")
                .text("hello")
                .expect("valid"),
        )
        .expect("new");
        s.add_resource(
            Resource::builder("test://bin", "bin")
                .mime_type("application/octet-stream")
                .ttl(Duration::from_millis(5))
                .cache_scope(CacheScope::Private)
                .blob(vec![0u8, 1, 2])
                .expect("valid"),
        )
        .expect("new");
        s.add_resource(
            Resource::builder("test://multi", "multi")
                .handler(|_cx| async {
                    vec![
                        ResourceContents::Text(TextResourceContents::new("test://multi/a", "A")),
                        ResourceContents::Text(TextResourceContents::new("", "B")),
                    ]
                })
                .expect("valid"),
        )
        .expect("new");
        s.add_resource_template(
            ResourceTemplate::builder("test://items/{id}", "item")
                .mime_type("application/json")
                .handler(|v: UriVariables, _| async move {
                    match v.get("id") {
                        Some("missing") => Err(HandlerError::NotFound),
                        Some(id) => Ok(format!("{{\"id\":\"{id}\"}}")),
                        None => Err(HandlerError::NotFound),
                    }
                })
                .expect("valid"),
        )
        .expect("new");
        // Shadowed by the first template for every URI both match.
        s.add_resource_template(
            ResourceTemplate::builder("test://items/{+rest}", "rest")
                .handler(|v: UriVariables, _| async move { format!("rest {}", v.uri()) })
                .expect("valid"),
        )
        .expect("new");
        s
    }

    #[tokio::test]
    async fn list_pages_through_resources_and_templates() {
        let s = server();
        let r = call(&s, "resources/list", json!({})).await;
        let res = &r["result"];
        assert_eq!(res["resultType"], "complete");
        assert!(res["ttlMs"].is_u64());
        assert_eq!(res["cacheScope"], "public");
        assert_eq!(
            res["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
            "1"
        );
        assert_eq!(
            res["resources"],
            json!([
                {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
                {"uri": "test://bin", "name": "bin", "mimeType": "application/octet-stream"}
            ])
        );
        let cursor = res["nextCursor"].as_str().expect("more");
        let r = call(&s, "resources/list", json!({"cursor": cursor})).await;
        assert_eq!(r["result"]["resources"][0]["uri"], "test://multi");
        assert!(r["result"].get("nextCursor").is_none());

        let r = call(&s, "resources/templates/list", json!({})).await;
        let res = &r["result"];
        assert_eq!(res["resultType"], "complete");
        assert!(res["ttlMs"].is_u64());
        assert_eq!(res["cacheScope"], "public");
        assert_eq!(
            res["resourceTemplates"],
            json!([
                {"uriTemplate": "test://items/{id}", "name": "item", "mimeType": "application/json"},
                {"uriTemplate": "test://items/{+rest}", "name": "rest"}
            ])
        );
        let bad = call(&s, "resources/templates/list", json!({"cursor": "x"})).await;
        assert_eq!(bad["error"]["code"], -32602);
    }

    #[tokio::test]
    async fn template_list_pages_with_stable_cursors() {
        let s = server();
        s.add_resource_template(
            ResourceTemplate::builder("test://third/{x}", "third")
                .handler(|_: UriVariables, _| async { "x" })
                .expect("valid"),
        )
        .expect("new");
        let first = call(&s, "resources/templates/list", json!({})).await;
        let cursor = first["result"]["nextCursor"].as_str().expect("two pages");
        assert_eq!(
            first["result"]["resourceTemplates"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
        let second = call(&s, "resources/templates/list", json!({"cursor": cursor})).await;
        assert_eq!(
            second["result"]["resourceTemplates"],
            json!([{"uriTemplate": "test://third/{x}", "name": "third"}])
        );
        assert!(second["result"].get("nextCursor").is_none());
        assert_eq!(
            second["result"]["cacheScope"],
            first["result"]["cacheScope"]
        );
        // The same cursor gives the same page again.
        let again = call(&s, "resources/templates/list", json!({"cursor": cursor})).await;
        assert_eq!(again["result"], second["result"]);
    }

    #[tokio::test]
    async fn read_fills_uri_mime_and_cache_hints() {
        let s = server();
        let r = call(&s, "resources/read", json!({"uri": "test://static-text"})).await;
        let res = &r["result"];
        assert_eq!(
            res["contents"],
            json!([{"uri": "test://static-text", "mimeType": "text/plain", "text": "hello"}])
        );
        assert_eq!(res["resultType"], "complete");
        assert_eq!(res["ttlMs"], 60_000);
        assert_eq!(res["cacheScope"], "public");
        assert_eq!(
            res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "t"
        );

        let r = call(&s, "resources/read", json!({"uri": "test://bin"})).await;
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://bin", "mimeType": "application/octet-stream", "blob": "AAEC"}])
        );
        assert_eq!(r["result"]["ttlMs"], 5);
        assert_eq!(r["result"]["cacheScope"], "private");

        let r = call(&s, "resources/read", json!({"uri": "test://multi"})).await;
        assert_eq!(
            r["result"]["contents"],
            json!([
                {"uri": "test://multi/a", "text": "A"},
                {"uri": "test://multi", "text": "B"}
            ])
        );
    }

    #[tokio::test]
    async fn read_through_templates_in_registration_order() {
        let s = server();
        let r = call(&s, "resources/read", json!({"uri": "test://items/42"})).await;
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://items/42", "mimeType": "application/json", "text": "{\"id\":\"42\"}"}])
        );
        let r = call(&s, "resources/read", json!({"uri": "test://items/a/b"})).await;
        assert_eq!(r["result"]["contents"][0]["text"], "rest test://items/a/b");
    }

    #[tokio::test]
    async fn unknown_uri_is_invalid_params_with_the_uri_never_empty_contents() {
        let s = server();
        for uri in ["test://nope", "test://items/missing", "test://items/"] {
            let r = call(&s, "resources/read", json!({"uri": uri})).await;
            assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
            assert_eq!(r["error"]["message"], "Resource not found");
            assert_eq!(r["error"]["data"], json!({"uri": uri}));
            assert!(r.get("result").is_none());
        }
        let r = call(&s, "resources/read", json!({})).await;
        assert_eq!(r["error"]["code"], -32602);
    }

    #[tokio::test]
    async fn duplicates_are_refused_and_removal_works() {
        let s = server();
        let again = Resource::builder("test://bin", "again")
            .text("x")
            .expect("valid");
        assert!(s.add_resource(again).is_err());
        let again = ResourceTemplate::builder("test://items/{id}", "again")
            .handler(|_: UriVariables, _| async { "x" })
            .expect("valid");
        assert!(s.add_resource_template(again).is_err());
        assert!(s.remove_resource("test://bin"));
        assert!(s.remove_resource_template("test://items/{id}"));
        assert_eq!(s.resource_uris(), ["test://static-text", "test://multi"]);
        assert_eq!(s.resource_template_uris(), ["test://items/{+rest}"]);
        let r = call(&s, "resources/read", json!({"uri": "test://bin"})).await;
        assert_eq!(r["error"]["code"], -32602);
        // Now the second template answers.
        let r = call(&s, "resources/read", json!({"uri": "test://items/missing"})).await;
        assert_eq!(
            r["result"]["contents"][0]["text"],
            "rest test://items/missing"
        );
    }
}
