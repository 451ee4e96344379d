//! `#[tool]` expansion: checks the function, moves each parameter into a
//! hidden input struct (keeping its doc comment as the property description),
//! and writes the `<name>_tool()` function that builds the `Tool`.

use crate::args::ToolArgs;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, GenericArgument, ItemFn, Lit, LitStr, Meta, Pat,
    PathArguments, ReturnType, Signature, Type,
};

/// How the handler hands the request context to the function.
enum ContextArg {
    Owned,
    Shared,
    Exclusive,
}

/// One argument of the call to the user's function.
enum CallArg {
    Field(syn::Ident),
    Context(ContextArg),
}

pub(crate) fn expand(args: &ToolArgs, mut func: ItemFn) -> syn::Result<TokenStream> {
    check_signature(&func)?;
    let krate = args.krate();
    let fn_name = func.sig.ident.clone();
    let tool_fn = format_ident!("{}_tool", fn_name.to_string().trim_start_matches("r#"));
    let tool_name = match &args.name {
        Some(name) => name.clone(),
        None => LitStr::new(fn_name.to_string().trim_start_matches("r#"), fn_name.span()),
    };

    let mut fields = Vec::new();
    let mut field_names = Vec::new();
    let mut call = Vec::new();
    let mut context_seen = false;
    for input in &mut func.sig.inputs {
        let FnArg::Typed(param) = input else {
            return Err(syn::Error::new_spanned(
                &*input,
                "`#[tool]` goes on a free `async fn`; a `self` parameter is not supported \
                 (write a free function, or build the tool with `Tool::builder`)",
            ));
        };
        let split = split_param_attrs(std::mem::take(&mut param.attrs))?;
        param.attrs = split.kept;
        let field_attrs = split.field;
        if let Some(kind) = context_kind(&param.ty) {
            if context_seen {
                return Err(syn::Error::new_spanned(
                    &*param,
                    "duplicate `RequestContext` parameter; a tool takes at most one",
                ));
            }
            if let Some(attr) = split.input_only {
                return Err(syn::Error::new_spanned(
                    attr,
                    "the `RequestContext` parameter is not part of the input; \
                     it takes no `#[header]`, `#[serde]` or `#[schemars]`",
                ));
            }
            context_seen = true;
            call.push(CallArg::Context(kind));
            continue;
        }
        let ident = match &*param.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "`#[tool]` parameters must be plain names (`name: Type`): \
                     each name becomes a property of the input schema",
                ));
            }
        };
        if let Type::Reference(r) = &*param.ty {
            return Err(syn::Error::new_spanned(
                r,
                "`#[tool]` parameters are deserialised from the call's arguments, so they \
                 must be owned types (`String`, not `&str`); only `&RequestContext` may be \
                 borrowed",
            ));
        }
        let ty = &param.ty;
        fields.push(quote! { #(#field_attrs)* #ident: #ty });
        // Bound to a fresh name, so a parameter named like the function
        // cannot shadow it in the call.
        let local = format_ident!("__arg{}", field_names.len());
        field_names.push(quote! { #ident: #local });
        call.push(CallArg::Field(local));
    }

    let description = match &args.description {
        Some(d) => Some(d.value()),
        None => doc_text(&func.attrs),
    };
    let description = description.map(|d| quote! { .description(#d) });
    let title = args.title.as_ref().map(|t| quote! { .title(#t) });
    let annotations = args.has_annotations().then(|| {
        let hint = |v: Option<bool>| match v {
            Some(b) => quote! { ::core::option::Option::Some(#b) },
            None => quote! { ::core::option::Option::None },
        };
        let (r, d, i, o) = (
            hint(args.read_only),
            hint(args.destructive),
            hint(args.idempotent),
            hint(args.open_world),
        );
        quote! {
            .annotations(#krate::proto::types::ToolAnnotations {
                read_only_hint: #r,
                destructive_hint: #d,
                idempotent_hint: #i,
                open_world_hint: #o,
                ..::core::default::Default::default()
            })
        }
    });
    let requires = args
        .requires
        .iter()
        .map(|c| quote! { .require_capability(#c) });
    let scopes = (!args.scopes.is_empty()).then(|| {
        let scopes = &args.scopes;
        quote! { .scopes([#(#scopes),*]) }
    });
    let timeout = args
        .timeout_ms
        .as_ref()
        .map(|ms| quote! { .timeout(::core::time::Duration::from_millis(#ms)) });
    let concurrency = args
        .max_concurrency
        .as_ref()
        .map(|n| quote! { .max_concurrency(#n) });
    let result_bytes = args
        .max_result_bytes
        .as_ref()
        .map(|n| quote! { .max_result_bytes(#n) });
    let task = args
        .task
        .as_ref()
        .map(|support| quote! { .task(#krate::task::TaskSupport::#support) });
    let ui = args.ui.as_ref().map(|uri| quote! { .ui(#uri) });
    let visibility = args.visibility.as_ref().map(|who| {
        quote! { .visibility([#(#krate::apps::Visibility::#who),*]) }
    });
    let defer_task = args.defer_task.then(|| quote! { .defer_task() });
    let rerun = args.rerun.then(|| quote! { .rerun() });
    let task_ttl = args
        .task_ttl_ms
        .as_ref()
        .map(|ms| quote! { .task_ttl(::core::time::Duration::from_millis(#ms)) });

    let mutable_cx = call
        .iter()
        .any(|a| matches!(a, CallArg::Context(ContextArg::Exclusive)));
    let cx_binding = if mutable_cx {
        quote! { let mut __cx = __cx; }
    } else {
        quote! {}
    };
    let call_args = call.iter().map(|a| match a {
        CallArg::Field(ident) => quote! { #ident },
        CallArg::Context(ContextArg::Owned) => quote! { __cx },
        CallArg::Context(ContextArg::Shared) => quote! { &__cx },
        CallArg::Context(ContextArg::Exclusive) => quote! { &mut __cx },
    });

    let (output, convert) = output_and_conversion(&func.sig, args.structured, &krate)?;

    let krate_text = quote!(#krate).to_string();
    let serde_path = format!("{krate_text}::serde");
    let schemars_path = format!("{krate_text}::schemars");
    let vis = &func.vis;
    let doc = format!(
        "The MCP tool `{}` built from `{fn_name}` by `#[tool]`.\n\n\
         # Errors\n\nWhen the tool's name or schemas are invalid (see `toolwire::RegistrationError`).",
        tool_name.value()
    );
    let input = format_ident!("__ToolwireInput");
    Ok(quote! {
        #func

        #[doc = #doc]
        #vis fn #tool_fn() -> ::core::result::Result<#krate::Tool, #krate::RegistrationError> {
            #[derive(#krate::serde::Deserialize, #krate::schemars::JsonSchema)]
            #[serde(crate = #serde_path)]
            #[schemars(crate = #schemars_path)]
            struct #input {
                #(#fields,)*
            }
            #krate::Tool::builder(#tool_name)
                #title
                #description
                #annotations
                #(#requires)*
                #scopes
                #ui
                #visibility
                #timeout
                #concurrency
                #result_bytes
                #task
                #defer_task
                #rerun
                #task_ttl
                .input::<#input>()
                #output
                .handler(|__input: #input, __cx: #krate::RequestContext| async move {
                    let #input { #(#field_names,)* } = __input;
                    #cx_binding
                    let __out = #fn_name(#(#call_args),*).await;
                    #convert
                })
        }
    })
}

/// The function without the parameter attributes that are for the input
/// struct (doc comments, `header`, `serde`, `schemars`): Rust refuses them on
/// a function's parameters.
pub(crate) fn without_tool_attrs(mut func: ItemFn) -> ItemFn {
    for input in &mut func.sig.inputs {
        if let FnArg::Typed(param) = input {
            param.attrs.retain(|a| {
                !["doc", "header", "serde", "schemars"]
                    .iter()
                    .any(|name| a.path().is_ident(name))
            });
        }
    }
    func
}

fn check_signature(func: &ItemFn) -> syn::Result<()> {
    let sig = &func.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "`#[tool]` needs an `async fn`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            "a `#[tool]` function cannot be generic: its input schema is fixed when the tool \
             is built",
        ));
    }
    if let Some(v) = &sig.variadic {
        return Err(syn::Error::new_spanned(
            v,
            "`#[tool]` functions are not variadic",
        ));
    }
    Ok(())
}

/// Splits a parameter's attributes into those for the input struct's field
/// (doc comments, `serde`, `schemars`, and `header` turned into the
/// `x-mcp-header` annotation) and those the function keeps.
fn split_param_attrs(attrs: Vec<Attribute>) -> syn::Result<ParamAttrs> {
    let mut field = Vec::new();
    let mut kept = Vec::new();
    let mut input_only = None;
    let mut header_seen = false;
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("doc") {
            field.push(quote! { #attr });
        } else if path.is_ident("serde") || path.is_ident("schemars") {
            input_only.get_or_insert_with(|| attr.clone());
            field.push(quote! { #attr });
        } else if path.is_ident("header") {
            if header_seen {
                return Err(syn::Error::new(
                    attr.span(),
                    "a parameter is mirrored into at most one header",
                ));
            }
            header_seen = true;
            input_only.get_or_insert_with(|| attr.clone());
            let name: LitStr = attr.parse_args().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected `#[header(\"Name\")]`: the header is `Mcp-Param-Name`",
                )
            })?;
            // Spec: server/tools.mdx#x-mcp-header
            let span = attr.span();
            field.push(quote_spanned! {span=> #[schemars(extend("x-mcp-header" = #name))] });
        } else {
            kept.push(attr);
        }
    }
    Ok(ParamAttrs {
        field,
        kept,
        input_only,
    })
}

/// A parameter's attributes, split by where they go.
struct ParamAttrs {
    /// For the input struct's field.
    field: Vec<TokenStream>,
    /// For the function's parameter.
    kept: Vec<Attribute>,
    /// The first attribute that only makes sense on an input property.
    input_only: Option<Attribute>,
}

/// The request context, recognised by its type's last path segment:
/// `RequestContext`, `&RequestContext` or `&mut RequestContext`.
fn context_kind(ty: &Type) -> Option<ContextArg> {
    let (inner, kind) = match ty {
        Type::Reference(r) if r.mutability.is_some() => (&*r.elem, ContextArg::Exclusive),
        Type::Reference(r) => (&*r.elem, ContextArg::Shared),
        other => (other, ContextArg::Owned),
    };
    let Type::Path(p) = inner else { return None };
    let last = p.path.segments.last()?;
    (p.qself.is_none() && last.ident == "RequestContext" && last.arguments.is_none())
        .then_some(kind)
}

/// The function's doc comment as one description: each line without the
/// one space after `///`, blank lines kept as paragraph breaks.
fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|s| {
            s.split('\n')
                .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// The `.output::<O>()` call (for `#[tool(structured)]`) and the conversion
/// of the function's value into what the handler returns. Both carry the
/// span of the return type, so a type that does not fit is reported there
/// rather than on the attribute.
///
/// With `structured`, `O` is the return type with `Result<_, E>` and then
/// `HandlerOutput<_>` peeled off, by the last path segment's name.
fn output_and_conversion(
    sig: &Signature,
    structured: bool,
    krate: &syn::Path,
) -> syn::Result<(TokenStream, TokenStream)> {
    let ReturnType::Type(_, ty) = &sig.output else {
        if structured {
            return Err(syn::Error::new_spanned(
                &sig.ident,
                "`#[tool(structured)]` needs a return type: the struct sent as `structuredContent`",
            ));
        }
        // `()` is no tool result; the conversion below reports it at the name.
        let span = sig.ident.span();
        return Ok((quote! {}, text_conversion(span, krate)));
    };
    let span = ty.span();
    if !structured {
        return Ok((quote! {}, text_conversion(span, krate)));
    }
    let (is_result, inner) = match generic_of(ty, "Result") {
        Some(inner) => (true, inner),
        None => (false, &**ty),
    };
    let out_ty = generic_of(inner, "HandlerOutput").unwrap_or(inner);
    let error = if is_result {
        quote_spanned! {span=>
            let __out = ::core::result::Result::map_err(
                __out,
                |e| -> #krate::HandlerError { ::core::convert::Into::into(e) },
            );
        }
    } else {
        quote! {}
    };
    let convert = quote_spanned! {span=>
        #error
        fn __toolwire_structured<O, R: #krate::IntoTypedOutput<O>>(
            r: R,
        ) -> ::core::result::Result<#krate::HandlerOutput<O>, #krate::HandlerError> {
            #krate::IntoTypedOutput::into_typed_output(r)
        }
        __toolwire_structured::<#out_ty, _>(__out)
    };
    Ok((quote_spanned! {span=> .output::<#out_ty>() }, convert))
}

/// Converts a text or content result, reporting an unfit type at `span`.
fn text_conversion(span: proc_macro2::Span, krate: &syn::Path) -> TokenStream {
    quote_spanned! {span=>
        fn __toolwire_content<R: #krate::IntoHandlerOutput<#krate::proto::types::CallToolResult>>(
            r: R,
        ) -> ::core::result::Result<#krate::ToolResult, #krate::HandlerError> {
            #krate::IntoHandlerOutput::into_handler_output(r)
        }
        __toolwire_content(__out)
    }
}

/// The first generic argument of `ty` when its last path segment is `name`.
fn generic_of<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn doc_text_keeps_paragraphs_and_drops_the_space_after_slashes() {
        let f: ItemFn = parse_quote! {
            /// First line.
            ///   indented
            ///
            /// Second paragraph.
            #[inline]
            async fn f() {}
        };
        assert_eq!(
            doc_text(&f.attrs).as_deref(),
            Some("First line.\n  indented\n\nSecond paragraph.")
        );
        let bare: ItemFn = parse_quote! { async fn g() {} };
        assert_eq!(doc_text(&bare.attrs), None);
    }

    #[test]
    fn the_context_is_recognised_by_its_last_segment() {
        let owned: Type = parse_quote!(toolwire::RequestContext);
        let shared: Type = parse_quote!(&RequestContext);
        let exclusive: Type = parse_quote!(&mut RequestContext);
        let other: Type = parse_quote!(RequestContexts);
        let generic: Type = parse_quote!(RequestContext<u8>);
        assert!(matches!(context_kind(&owned), Some(ContextArg::Owned)));
        assert!(matches!(context_kind(&shared), Some(ContextArg::Shared)));
        assert!(matches!(
            context_kind(&exclusive),
            Some(ContextArg::Exclusive)
        ));
        assert!(context_kind(&other).is_none());
        assert!(context_kind(&generic).is_none());
    }

    #[test]
    fn structured_output_types_peel_result_then_handler_output() {
        let krate: syn::Path = parse_quote!(::toolwire);
        for (sig, expected) in [
            (
                parse_quote!(async fn f() -> Weather),
                quote!(.output::<Weather>()),
            ),
            (
                parse_quote!(async fn f() -> std::io::Result<Weather>),
                quote!(.output::<Weather>()),
            ),
            (
                parse_quote!(async fn f() -> Result<HandlerOutput<Weather>, ToolError>),
                quote!(.output::<Weather>()),
            ),
            (
                parse_quote!(async fn f() -> toolwire::HandlerOutput<Vec<u8>>),
                quote!(.output::<Vec<u8>>()),
            ),
        ] {
            let sig: Signature = sig;
            let (output, _) = output_and_conversion(&sig, true, &krate).expect("structured");
            let squash = |t: TokenStream| t.to_string().replace(' ', "");
            assert_eq!(squash(output), squash(expected));
        }
        let none: Signature = parse_quote!(async fn f());
        assert!(output_and_conversion(&none, true, &krate).is_err());
        let (output, _) = output_and_conversion(&none, false, &krate).expect("text");
        assert!(output.is_empty());
    }
}
