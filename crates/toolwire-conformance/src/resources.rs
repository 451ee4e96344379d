//! The resource fixtures: two fixed resources and one template.

use crate::PNG_BASE64;
use toolwire::proto::types::{BlobResourceContents, ResourceContents};
use toolwire::{
    Completer, HandlerError, RegistrationError, Resource, ResourceTemplate, Server, UriVariables,
};

/// The text `test://template/{id}/data` reads as for `id`, a JSON object
/// with its members in the order the scenario gives.
pub(crate) fn template_data(id: &str) -> String {
    let quote = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
    format!(
        r#"{{"id":{},"templateTest":true,"data":{}}}"#,
        quote(id),
        quote(&format!("Data for ID: {id}"))
    )
}

pub(crate) fn register(server: &Server) -> Result<(), RegistrationError> {
    // Listed first: the `caching` scenario reads the first listed resource.
    server.add_resource(
        Resource::builder("test://static-text", "static-text")
            .title("Static text")
            .description("A static text resource for testing")
            .mime_type("text/plain")
            .text("This is the content of the static text resource.")?,
    )?;
    server.add_resource(
        Resource::builder("test://static-binary", "static-binary")
            .title("Static binary")
            .description("A static binary resource (a 1x1 PNG) for testing")
            .mime_type("image/png")
            .handler(|_cx| async {
                ResourceContents::Blob(BlobResourceContents {
                    blob: PNG_BASE64.to_owned(),
                    ..BlobResourceContents::default()
                })
            })?,
    )?;
    server.add_resource_template(
        ResourceTemplate::builder("test://template/{id}/data", "template-data")
            .title("Template data")
            .description("A resource template with an id parameter")
            .mime_type("application/json")
            .complete("id", Completer::from_values(["123", "456", "789"]))
            .handler(|vars: UriVariables, _| async move {
                match vars.get("id") {
                    Some(id) => Ok(template_data(id)),
                    None => Err(HandlerError::NotFound),
                }
            })?,
    )?;
    Ok(())
}
