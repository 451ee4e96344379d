//! The tool-name rule: 1 to 128 characters from `A-Za-z0-9_.-`.

// Spec: server/tools.mdx#tool-names

/// The longest tool name allowed, in characters.
const MAX_TOOL_NAME_LEN: usize = 128;

/// Why a tool name was rejected by [`validate_tool_name`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolNameError {
    /// The name has no characters; a tool name needs 1 to 128.
    #[error("tool name is empty; it must be 1 to 128 characters long")]
    Empty,
    /// The name is longer than 128 characters.
    #[error("tool name is {len} characters long; it must be at most 128 characters long")]
    TooLong {
        /// The length of the rejected name, in characters.
        len: usize,
    },
    /// The name contains a character outside `A-Za-z0-9_.-`.
    #[error(
        "tool name contains {ch:?} at character {index}; only ASCII letters, digits, '_', '-' and '.' are allowed"
    )]
    InvalidChar {
        /// The offending character.
        ch: char,
        /// Its position in the name, counted in characters from 0.
        index: usize,
    },
}

/// Checks a tool name against the spec's naming rule: 1 to 128 characters,
/// each an ASCII letter, a digit, `_`, `-` or `.`. Names are case-sensitive,
/// so no case folding happens here.
///
/// The spec states this rule as a SHOULD; toolwire enforces it when a tool is
/// registered so that names are always safe to carry in an `Mcp-Name` header
/// without encoding.
///
/// ```
/// use toolwire_proto::{ToolNameError, validate_tool_name};
///
/// assert!(validate_tool_name("admin.tools.list").is_ok());
/// assert_eq!(
///     validate_tool_name("get user"),
///     Err(ToolNameError::InvalidChar { ch: ' ', index: 3 }),
/// );
/// ```
pub fn validate_tool_name(name: &str) -> Result<(), ToolNameError> {
    // Spec: server/tools.mdx#tool-names
    if name.is_empty() {
        return Err(ToolNameError::Empty);
    }
    let len = name.chars().count();
    if len > MAX_TOOL_NAME_LEN {
        return Err(ToolNameError::TooLong { len });
    }
    match name
        .chars()
        .enumerate()
        .find(|&(_, ch)| !is_tool_name_char(ch))
    {
        Some((index, ch)) => Err(ToolNameError::InvalidChar { ch, index }),
        None => Ok(()),
    }
}

fn is_tool_name_char(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_names_are_valid() {
        for name in ["getUser", "DATA_EXPORT_v2", "admin.tools.list"] {
            assert_eq!(validate_tool_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn every_allowed_character_class_is_accepted() {
        assert_eq!(validate_tool_name("azAZ09_-."), Ok(()));
        assert_eq!(validate_tool_name("-"), Ok(()));
        assert_eq!(validate_tool_name("."), Ok(()));
    }

    #[test]
    fn empty_name_is_rejected() {
        assert_eq!(validate_tool_name(""), Err(ToolNameError::Empty));
    }

    #[test]
    fn name_of_128_characters_is_accepted() {
        assert_eq!(validate_tool_name(&"a".repeat(128)), Ok(()));
    }

    #[test]
    fn name_of_129_characters_is_too_long() {
        assert_eq!(
            validate_tool_name(&"a".repeat(129)),
            Err(ToolNameError::TooLong { len: 129 })
        );
    }

    #[test]
    fn length_is_counted_in_characters_not_bytes() {
        // 100 two-byte characters: 200 bytes but only 100 characters, so the
        // failure is the character, not the length.
        let name = "é".repeat(100);
        assert_eq!(
            validate_tool_name(&name),
            Err(ToolNameError::InvalidChar { ch: 'é', index: 0 })
        );
    }

    #[test]
    fn space_comma_and_slash_are_rejected_with_their_position() {
        assert_eq!(
            validate_tool_name("get user"),
            Err(ToolNameError::InvalidChar { ch: ' ', index: 3 })
        );
        assert_eq!(
            validate_tool_name("a,b"),
            Err(ToolNameError::InvalidChar { ch: ',', index: 1 })
        );
        assert_eq!(
            validate_tool_name("tools/list"),
            Err(ToolNameError::InvalidChar { ch: '/', index: 5 })
        );
    }

    #[test]
    fn invalid_char_index_counts_characters() {
        assert_eq!(
            validate_tool_name("ü!"),
            Err(ToolNameError::InvalidChar { ch: 'ü', index: 0 })
        );
        assert_eq!(
            validate_tool_name("aé!"),
            Err(ToolNameError::InvalidChar { ch: 'é', index: 1 })
        );
    }

    #[test]
    fn control_characters_are_rejected() {
        assert_eq!(
            validate_tool_name("a\nb"),
            Err(ToolNameError::InvalidChar { ch: '\n', index: 1 })
        );
    }

    #[test]
    fn error_messages_name_the_rule() {
        assert!(ToolNameError::Empty.to_string().contains("empty"));
        assert!(
            ToolNameError::TooLong { len: 200 }
                .to_string()
                .contains("at most 128")
        );
        let msg = ToolNameError::InvalidChar { ch: ' ', index: 3 }.to_string();
        assert!(msg.contains("' '") && msg.contains('3'), "{msg}");
    }
}
