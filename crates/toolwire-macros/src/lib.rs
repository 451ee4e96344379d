//! The `#[tool]` attribute and the `tools!` macro of toolwire. Use them
//! through the `toolwire` crate (`toolwire::tool`, `toolwire::tools!`, on by
//! default with its `macros` feature): the generated code names
//! `::toolwire` paths only.

mod args;
mod expand;

use proc_macro::TokenStream;
use quote::{format_ident, quote};
use syn::punctuated::Punctuated;
use syn::{ItemFn, Path, Token, parse_macro_input};

/// Turns an `async fn` with typed parameters into an MCP tool.
///
/// The function stays as written (call it directly in unit tests). Beside
/// it, `#[tool]` adds `fn <name>_tool() -> Result<toolwire::Tool,
/// toolwire::RegistrationError>`, with the function's visibility, which
/// builds the tool through `Tool::builder`:
///
/// ```
/// use toolwire::{Server, ServerConfig, tool};
///
/// /// Adds two numbers.
/// #[tool(read_only, idempotent)]
/// async fn add(
///     /// The first addend.
///     a: i64,
///     /// The second addend.
///     b: i64,
/// ) -> String {
///     (a + b).to_string()
/// }
///
/// # fn main() -> Result<(), toolwire::RegistrationError> {
/// let server = Server::new(ServerConfig::new("demo", "1.0.0"));
/// server.add_tool(add_tool()?)?;
/// # Ok(()) }
/// ```
///
/// - **Name**: the function's name, or `#[tool(name = "...")]`.
/// - **Description**: the function's doc comment, or
///   `#[tool(description = "...")]`.
/// - **Input schema**: each parameter (a plain `name: Type`, `Type` owned
///   and `Deserialize + JsonSchema`) becomes a property of a hidden input
///   struct; its doc comment becomes the property's `description`. An
///   `Option<T>` parameter is not required. `#[serde(...)]` and
///   `#[schemars(...)]` on a parameter go to the field as they are (for
///   example `#[serde(default)]` or `#[schemars(range(min = 1))]`).
///   `#[header("Region")]` marks it with `x-mcp-header` (mirrored into
///   `Mcp-Param-Region` over HTTP); the builder checks the annotation when
///   the tool is built.
/// - **Request context**: a parameter whose type is `RequestContext`,
///   `&RequestContext` or `&mut RequestContext` (recognised by that last
///   path segment, in any position, at most one) receives the context and
///   is not part of the input. Leave it out when the tool does not need it.
/// - **Output**: without `structured`, the function returns anything a
///   `Tool::builder` handler may return: `String`, `&'static str`, a
///   `ContentBlock` or `Vec<ContentBlock>`, a `CallToolResult`, a
///   `ToolResult`, an `InputRequired`, or a `Result` of one of these whose
///   error converts into `toolwire::HandlerError` (an `Err` becomes an
///   `isError: true` result with the error's message).
/// - **Structured output**: `#[tool(structured)]` sends the returned value
///   (`Serialize + JsonSchema`) as `structuredContent` and declares its
///   `outputSchema`. The output type is the return type with a `Result<_, E>`
///   and then a `HandlerOutput<_>` taken off, by name: `T`,
///   `Result<T, E>`, `HandlerOutput<T>` and `Result<HandlerOutput<T>, E>`
///   all declare `T`. A `HandlerOutput::InputRequired` asks the client for
///   input (MRTR), as with the builder.
///
/// Other arguments: `title = "..."`; the behaviour hints `read_only`,
/// `destructive`, `idempotent` and `open_world` (each alone means `true`,
/// or `= false`); `requires = "sampling"` (repeatable) for a client
/// capability the tool cannot run without; the tool's own limits
/// `timeout_ms = 5000`, `max_concurrency = 2` and `max_result_bytes =
/// 65536` (`ToolBuilder::timeout`, `max_concurrency`, `max_result_bytes`);
/// `scope = "files:read"` (repeatable) for an OAuth scope a caller needs
/// (`ToolBuilder::scopes`); `task = "optional"` or `task = "required"` for
/// a tool that may (or must) run as a task, with `defer_task` when the
/// handler decides when (`ToolBuilder::task`, `defer_task`) and
/// `task_ttl_ms = 600000` for its tasks' time to live; `crate = "path"` when the toolwire crate is
/// not reachable as `::toolwire`.
///
/// Not supported, each with a compile error: a function that is not
/// `async`, a `self` parameter (the attribute goes on free functions),
/// generics, patterns in place of parameter names, borrowed parameters
/// other than the context, two context parameters, and unknown arguments.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut args = args::ToolArgs::default();
    let parser = syn::meta::parser(|meta| args.parse(&meta));
    parse_macro_input!(attr with parser);
    let func = parse_macro_input!(item as ItemFn);
    match expand::expand(&args, func.clone()) {
        Ok(tokens) => tokens.into(),
        Err(e) => {
            // The error, and the function as written without the
            // attributes only `#[tool]` understands: code that uses the
            // function then reports nothing further.
            let error = e.into_compile_error();
            let func = expand::without_tool_attrs(func);
            quote! { #error #func }.into()
        }
    }
}

/// Derives what a type needs to cross a tool's boundary, through
/// toolwire's own re-exports, so the user's Cargo.toml needs no `serde` or
/// `schemars`: `Serialize`, `Deserialize` and `JsonSchema`, with
/// `#[serde(crate = "toolwire::serde")]` and
/// `#[schemars(crate = "toolwire::schemars")]`. `#[schema(output)]`
/// derives only `Serialize` and `JsonSchema` (a tool's structured output),
/// `#[schema(input)]` only `Deserialize` and `JsonSchema` (an argument or
/// a form's answer). Other `serde` and `schemars` attributes on the type
/// and its fields work as usual.
///
/// ```
/// /// The weather in a city.
/// #[toolwire::schema(output)]
/// struct Weather {
///     /// Degrees Celsius.
///     celsius: f64,
/// }
///
/// /// Looks up the weather.
/// #[toolwire::tool(structured)]
/// async fn weather(city: String) -> Weather {
///     Weather { celsius: city.len() as f64 }
/// }
/// # let _ = weather_tool().expect("valid");
/// ```
#[proc_macro_attribute]
pub fn schema(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut serialize = true;
    let mut deserialize = true;
    let mut krate: Path = syn::parse_quote!(::toolwire);
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("output") {
            deserialize = false;
            Ok(())
        } else if meta.path.is_ident("input") {
            serialize = false;
            Ok(())
        } else if meta.path.is_ident("crate") {
            let value: syn::LitStr = meta.value()?.parse()?;
            krate = value.parse()?;
            Ok(())
        } else {
            Err(meta.error("expected `output`, `input` or `crate = \"path\"`"))
        }
    });
    parse_macro_input!(attr with parser);
    if !serialize && !deserialize {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "give `output` or `input`, not both (without either, both are derived)",
        )
        .into_compile_error()
        .into();
    }
    let item = parse_macro_input!(item as syn::DeriveInput);
    let mut derives = Vec::new();
    if serialize {
        derives.push(quote! { #krate::serde::Serialize });
    }
    if deserialize {
        derives.push(quote! { #krate::serde::Deserialize });
    }
    derives.push(quote! { #krate::schemars::JsonSchema });
    let serde_path = format!("{}::serde", quote!(#krate).to_string().replace(' ', ""));
    let schemars_path = format!("{}::schemars", quote!(#krate).to_string().replace(' ', ""));
    quote! {
        #[derive(#(#derives),*)]
        #[serde(crate = #serde_path)]
        #[schemars(crate = #schemars_path)]
        #item
    }
    .into()
}

/// Builds several `#[tool]` functions at once:
/// `tools![add, echo, weather::forecast]` calls `add_tool()`,
/// `echo_tool()` and `weather::forecast_tool()` and is a
/// `Result<Vec<toolwire::Tool>, toolwire::RegistrationError>` holding the
/// first error.
///
/// ```
/// use toolwire::{Server, ServerConfig, tool, tools};
///
/// /// Echoes the text.
/// #[tool]
/// async fn echo(text: String) -> String { text }
///
/// /// Says hello.
/// #[tool]
/// async fn hello() -> &'static str { "hello" }
///
/// # fn main() -> Result<(), toolwire::RegistrationError> {
/// let server = Server::new(ServerConfig::new("demo", "1.0.0"));
/// for tool in tools![echo, hello]? {
///     server.add_tool(tool)?;
/// }
/// assert_eq!(server.tool_names().len(), 2);
/// # Ok(()) }
/// ```
#[proc_macro]
pub fn tools(input: TokenStream) -> TokenStream {
    let paths = parse_macro_input!(input with Punctuated::<Path, Token![,]>::parse_terminated);
    if paths.is_empty() {
        return quote! {
            ::core::result::Result::<
                ::std::vec::Vec<::toolwire::Tool>,
                ::toolwire::RegistrationError,
            >::Ok(::std::vec::Vec::new())
        }
        .into();
    }
    let calls = paths.into_iter().map(|mut path| {
        if let Some(last) = path.segments.last_mut() {
            let name = last.ident.to_string();
            last.ident = format_ident!(
                "{}_tool",
                name.trim_start_matches("r#"),
                span = last.ident.span()
            );
        }
        quote! { #path() }
    });
    quote! {
        ::core::iter::Iterator::collect::<
            ::core::result::Result<::std::vec::Vec<::toolwire::Tool>, ::toolwire::RegistrationError>,
        >(::core::iter::IntoIterator::into_iter([#(#calls),*]))
    }
    .into()
}
