//! A setting per tool, with a default for the tools not named: what the
//! built-in layers are configured with.

use std::collections::HashMap;

/// A value for each named tool, and a default for the others (none: the
/// setting does not apply to them).
#[derive(Debug, Clone)]
pub struct PerTool<T> {
    default: Option<T>,
    tools: HashMap<Box<str>, T>,
}

impl<T> Default for PerTool<T> {
    fn default() -> Self {
        Self {
            default: None,
            tools: HashMap::new(),
        }
    }
}

impl<T> PerTool<T> {
    /// `value` for every tool not named otherwise.
    pub fn all(value: T) -> Self {
        Self {
            default: Some(value),
            tools: HashMap::new(),
        }
    }

    /// No default: only the tools named with [`tool`](Self::tool).
    pub fn none() -> Self {
        Self::default()
    }

    /// `value` for the tool `name`, replacing the default for it.
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, value: T) -> Self {
        self.tools.insert(name.into().into_boxed_str(), value);
        self
    }

    /// The value for `name`: its own, else the default.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.tools.get(name).or(self.default.as_ref())
    }

    /// The named tools' values.
    pub(crate) fn named(&self) -> impl Iterator<Item = (&str, &T)> {
        self.tools.iter().map(|(k, v)| (&**k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_tool_overrides_the_default() {
        let p = PerTool::all(1).tool("slow", 5);
        assert_eq!(p.get("slow"), Some(&5));
        assert_eq!(p.get("other"), Some(&1));
        let only = PerTool::none().tool("slow", 5);
        assert_eq!(only.get("other"), None);
    }
}
