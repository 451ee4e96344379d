//! Namespacing: the name a downstream client sees for an upstream's tool or
//! prompt, and the problems a name can have (the fix included).

use crate::config::{Namespace, Upstream};
use std::fmt;
use toolwire::proto::validate_tool_name;

/// Longest name the function-calling dialects of the major model providers
/// accept; longer names are served (the protocol allows 128) but reported.
pub const PROVIDER_NAME_LIMIT: usize = 64;

/// How exposed names are made.
#[derive(Debug, Clone)]
pub(crate) struct Naming {
    pub(crate) separator: String,
    pub(crate) mode: Namespace,
}

impl Naming {
    /// The exposed name of `upstream`'s `name` (after its rename, if any).
    pub(crate) fn exposed(&self, upstream: &Upstream, name: &str) -> String {
        let base = upstream
            .overrides
            .get(name)
            .and_then(|o| o.name.as_deref())
            .unwrap_or(name);
        match self.mode {
            Namespace::Always => format!("{}{}{base}", upstream.prefix, self.separator),
            Namespace::Never => base.to_owned(),
        }
    }
}

/// What is wrong with one exposed name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameProblem {
    /// The name breaks the tool-name rule: the entry is left out.
    Invalid {
        /// The upstream.
        upstream: String,
        /// The upstream's own name.
        name: String,
        /// The exposed name.
        exposed: String,
        /// Why.
        reason: String,
    },
    /// Longer than [`PROVIDER_NAME_LIMIT`]: served, but model providers
    /// reject it.
    TooLong {
        /// The upstream.
        upstream: String,
        /// The upstream's own name.
        name: String,
        /// The exposed name.
        exposed: String,
    },
    /// Two upstreams expose the same name: the second is left out (or, at
    /// start-up with `namespace = "never"`, the gateway refuses to start).
    Collision {
        /// The exposed name.
        exposed: String,
        /// The upstream that keeps it.
        first: String,
        /// The upstream whose entry is left out.
        second: String,
    },
}

impl NameProblem {
    /// Whether the entry is left out of the merged list.
    pub fn drops_entry(&self) -> bool {
        !matches!(self, Self::TooLong { .. })
    }
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid {
                upstream,
                name,
                exposed,
                reason,
            } => write!(
                f,
                "{upstream}: {exposed:?} is not a valid tool name ({reason}); left out. Fix: rename it with [upstreams.{upstream}.tools.{name:?}] name = \"...\", or change the prefix"
            ),
            Self::TooLong {
                upstream,
                name,
                exposed,
            } => write!(
                f,
                "{upstream}: {exposed:?} has {} characters, over the {PROVIDER_NAME_LIMIT} that model providers accept. Fix: a shorter `prefix` for [upstreams.{upstream}], or [upstreams.{upstream}.tools.{name:?}] name = \"...\"",
                exposed.chars().count()
            ),
            Self::Collision {
                exposed,
                first,
                second,
            } => write!(
                f,
                "{exposed:?} is offered by both upstreams {first:?} and {second:?}; {second:?}'s is left out. Fix: namespace = \"always\", or rename one with [upstreams.{second}.tools.NAME] name = \"...\""
            ),
        }
    }
}

/// A collision the configuration alone makes: two upstreams renaming tools
/// to the same exposed name (`[upstreams.X.tools.T] name = "..."`).
pub(crate) fn configured_collision(upstreams: &[Upstream], naming: &Naming) -> Option<NameProblem> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for up in upstreams {
        for (name, o) in &up.overrides {
            if o.name.is_none() {
                continue;
            }
            let exposed = naming.exposed(up, name);
            match seen.get(exposed.as_str()) {
                Some(first) if *first != up.key => {
                    return Some(NameProblem::Collision {
                        exposed,
                        first: (*first).to_owned(),
                        second: up.key.clone(),
                    });
                }
                Some(_) => {}
                None => {
                    seen.insert(exposed, &up.key);
                }
            }
        }
    }
    None
}

/// The problem of `exposed`, if any, other than collisions.
pub(crate) fn check(upstream: &str, name: &str, exposed: &str) -> Option<NameProblem> {
    if let Err(e) = validate_tool_name(exposed) {
        return Some(NameProblem::Invalid {
            upstream: upstream.to_owned(),
            name: name.to_owned(),
            exposed: exposed.to_owned(),
            reason: e.to_string(),
        });
    }
    (exposed.chars().count() > PROVIDER_NAME_LIMIT).then(|| NameProblem::TooLong {
        upstream: upstream.to_owned(),
        name: name.to_owned(),
        exposed: exposed.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GatewayConfig;

    fn upstream(text: &str) -> Upstream {
        GatewayConfig::parse(text).expect("config").upstreams()[0].clone()
    }

    #[test]
    fn prefix_separator_and_rename() {
        let up = upstream(
            "[upstreams.demo]\nurl = \"http://a\"\n[upstreams.demo.tools.echo]\nname = \"say\"\n",
        );
        let always = Naming {
            separator: "__".into(),
            mode: Namespace::Always,
        };
        assert_eq!(always.exposed(&up, "add"), "demo__add");
        assert_eq!(always.exposed(&up, "echo"), "demo__say");
        let never = Naming {
            separator: "__".into(),
            mode: Namespace::Never,
        };
        assert_eq!(never.exposed(&up, "add"), "add");
    }

    #[test]
    fn two_renames_to_one_name_collide_from_the_config_alone() {
        let config = GatewayConfig::parse(
            "namespace = \"never\"\n[upstreams.a]\nurl = \"http://a\"\n[upstreams.a.tools.echo]\nname = \"say\"\n[upstreams.b]\nurl = \"http://b\"\n[upstreams.b.tools.shout]\nname = \"say\"\n",
        )
        .expect("config");
        let naming = Naming {
            separator: "__".into(),
            mode: Namespace::Never,
        };
        assert_eq!(
            configured_collision(config.upstreams(), &naming),
            Some(NameProblem::Collision {
                exposed: "say".into(),
                first: "a".into(),
                second: "b".into(),
            })
        );
        let always = Naming {
            separator: "__".into(),
            mode: Namespace::Always,
        };
        assert_eq!(configured_collision(config.upstreams(), &always), None);
    }

    #[test]
    fn invalid_and_long_names_are_reported_with_a_fix() {
        let p = check("py", "a b", "py__a b").expect("invalid");
        assert!(p.drops_entry());
        assert!(
            p.to_string().contains("[upstreams.py.tools.\"a b\"]"),
            "{p}"
        );
        let long = format!("py__{}", "x".repeat(61));
        let p = check("py", "x", &long).expect("too long");
        assert!(!p.drops_entry());
        assert!(p.to_string().contains("65 characters"), "{p}");
        assert_eq!(check("py", "add", "py__add"), None);
    }
}
