//! The arguments of `#[tool(...)]`: parsed once, each at most once, with an
//! error naming the accepted ones for anything else.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{LitBool, LitInt, LitStr, Path};

/// What `#[tool(...)]` said.
#[derive(Default)]
pub(crate) struct ToolArgs {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) structured: bool,
    pub(crate) read_only: Option<bool>,
    pub(crate) destructive: Option<bool>,
    pub(crate) idempotent: Option<bool>,
    pub(crate) open_world: Option<bool>,
    pub(crate) requires: Vec<LitStr>,
    pub(crate) scopes: Vec<LitStr>,
    pub(crate) timeout_ms: Option<LitInt>,
    pub(crate) max_concurrency: Option<LitInt>,
    pub(crate) max_result_bytes: Option<LitInt>,
    pub(crate) task: Option<syn::Ident>,
    pub(crate) defer_task: bool,
    pub(crate) rerun: bool,
    pub(crate) task_ttl_ms: Option<LitInt>,
    pub(crate) ui: Option<LitStr>,
    pub(crate) visibility: Option<Vec<syn::Ident>>,
    pub(crate) krate: Option<Path>,
    seen: Vec<String>,
}

const ACCEPTED: &str = "name, title, description, structured, read_only, destructive, \
                        idempotent, open_world, requires, scope, timeout_ms, \
                        max_concurrency, max_result_bytes, task, defer_task, \
                        rerun, task_ttl_ms, ui, visibility, crate";

impl ToolArgs {
    /// Parses one `key`, `key = value` or `key = bool` item.
    pub(crate) fn parse(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
            return Err(meta.error(format!(
                "unknown `#[tool]` argument; expected one of: {ACCEPTED}"
            )));
        };
        // `requires` and `scope` may repeat (one each); everything else once.
        if key != "requires" && key != "scope" && self.seen.contains(&key) {
            return Err(meta.error(format!("`{key}` is given twice")));
        }
        self.seen.push(key.clone());
        match key.as_str() {
            "name" => self.name = Some(meta.value()?.parse()?),
            "title" => self.title = Some(meta.value()?.parse()?),
            "description" => self.description = Some(meta.value()?.parse()?),
            "structured" => self.structured = flag(meta)?,
            "read_only" => self.read_only = Some(flag(meta)?),
            "destructive" => self.destructive = Some(flag(meta)?),
            "idempotent" => self.idempotent = Some(flag(meta)?),
            "open_world" => self.open_world = Some(flag(meta)?),
            "requires" => self.requires.push(meta.value()?.parse()?),
            "timeout_ms" => self.timeout_ms = Some(positive(meta)?),
            "max_concurrency" => self.max_concurrency = Some(positive(meta)?),
            "max_result_bytes" => self.max_result_bytes = Some(positive(meta)?),
            "task" => {
                let lit: LitStr = meta.value()?.parse()?;
                let variant = match lit.value().as_str() {
                    "optional" => "Optional",
                    "required" => "Required",
                    "forbidden" => "Forbidden",
                    _ => {
                        return Err(syn::Error::new(
                            lit.span(),
                            "expected \"optional\", \"required\" or \"forbidden\"",
                        ));
                    }
                };
                self.task = Some(syn::Ident::new(variant, lit.span()));
            }
            "defer_task" => self.defer_task = flag(meta)?,
            "rerun" => self.rerun = flag(meta)?,
            "task_ttl_ms" => self.task_ttl_ms = Some(positive(meta)?),
            "ui" => {
                let lit: LitStr = meta.value()?.parse()?;
                if !lit.value().starts_with("ui://") {
                    return Err(syn::Error::new(
                        lit.span(),
                        "an app interface is a ui:// URI, such as \"ui://my-server/view\"",
                    ));
                }
                self.ui = Some(lit);
            }
            "visibility" => {
                // `"app"`, `"model"`, or both comma-separated.
                let lit: LitStr = meta.value()?.parse()?;
                let mut who = Vec::new();
                for part in lit.value().split(',').map(str::trim) {
                    let variant = match part {
                        "app" => "App",
                        "model" => "Model",
                        _ => {
                            return Err(syn::Error::new(
                                lit.span(),
                                "expected \"app\", \"model\" or \"model, app\"",
                            ));
                        }
                    };
                    who.push(syn::Ident::new(variant, lit.span()));
                }
                self.visibility = Some(who);
            }
            "crate" => {
                let lit: LitStr = meta.value()?.parse()?;
                self.krate = Some(lit.parse()?);
            }
            "scope" => self.scopes.push(meta.value()?.parse()?),
            "scopes" => {
                return Err(meta
                    .error("`scopes` is written `scope = \"...\"`, once per scope (repeatable)"));
            }
            _ => {
                return Err(meta.error(format!(
                    "unknown `#[tool]` argument `{key}`; expected one of: {ACCEPTED}"
                )));
            }
        }
        Ok(())
    }

    /// The path of the toolwire crate the generated code names.
    pub(crate) fn krate(&self) -> Path {
        self.krate.clone().unwrap_or_else(|| {
            let mut path = Path::from(syn::Ident::new("toolwire", Span::call_site()));
            path.leading_colon = Some(Default::default());
            path
        })
    }

    /// Whether any behaviour hint was given.
    pub(crate) fn has_annotations(&self) -> bool {
        self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }
}

/// `key = N` with a whole number of at least 1.
fn positive(meta: &ParseNestedMeta<'_>) -> syn::Result<LitInt> {
    let lit: LitInt = meta.value()?.parse()?;
    match lit.base10_parse::<u64>() {
        Ok(n) if n >= 1 => Ok(lit),
        _ => Err(syn::Error::new(
            lit.span(),
            "expected a whole number of at least 1",
        )),
    }
}

/// `key` alone is `true`; `key = true` / `key = false` says which.
fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(syn::Token![=]) {
        let lit: LitBool = meta.value()?.parse()?;
        Ok(lit.value)
    } else {
        Ok(true)
    }
}
