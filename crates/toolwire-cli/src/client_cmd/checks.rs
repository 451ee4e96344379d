//! Parsing and checking the connection options: `--timeout` seconds,
//! `--header` names, `--env` assignments, and the `NAME=value` words that
//! may lead a `--stdio` command line.

use std::time::Duration;

/// `--timeout SECONDS`: fractional seconds, more than zero.
pub(crate) fn timeout(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if secs.is_nan() || secs <= 0.0 {
        return Err(format!("{text:?}: the timeout must be more than 0 seconds"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("{text:?}: {e}"))
}

/// `--env KEY=VALUE`.
pub(crate) fn env(text: &str) -> Result<(String, String), String> {
    assignment(text).ok_or_else(|| format!("{text:?} is not KEY=VALUE"))
}

/// `NAME=value` with a shell variable name, as `--env` and a leading
/// `--stdio` word take it.
pub(crate) fn assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    (first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| (name.to_owned(), value.to_owned()))
}

/// `--header "Name: value"`, refusing the headers toolwire sets itself.
///
/// Spec: basic/transports/streamable-http.mdx#request-metadata —
/// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` carry
/// the protocol (and legacy servers use `Mcp-Session-Id`); a second copy
/// from the command line would contradict the client's own.
pub(crate) fn header(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once(':') else {
        return Err(format!("{text:?} is not \"Name: value\""));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("{text:?} has no header name"));
    }
    if name
        .get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case("mcp-"))
    {
        return Err(format!(
            "{name} is reserved: toolwire sets the Mcp-* and MCP-Protocol-Version headers itself"
        ));
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::{assignment, env, header, timeout};
    use std::time::Duration;

    #[test]
    fn timeouts_are_fractional_and_positive() {
        assert_eq!(timeout("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(timeout("3"), Ok(Duration::from_secs(3)));
        for bad in ["0", "0.0", "-1", "NaN", "soon", "", "1e400"] {
            assert!(timeout(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn assignments_need_a_variable_name() {
        assert_eq!(assignment("A_1=x=y"), Some(("A_1".into(), "x=y".into())));
        assert_eq!(assignment("E="), Some(("E".into(), String::new())));
        for bad in ["=x", "1A=x", "a-b=x", "novalue", "./cmd=x"] {
            assert_eq!(assignment(bad), None, "{bad:?}");
        }
        assert!(env("K").is_err());
    }

    #[test]
    fn reserved_headers_are_refused() {
        assert_eq!(
            header("X-Api-Key:  k "),
            Ok(("X-Api-Key".into(), "k".into()))
        );
        for bad in [
            "Mcp-Method: x",
            "mcp-session-id: 1",
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Param-Region: eu",
            "no colon",
            ": v",
        ] {
            assert!(header(bad).is_err(), "{bad:?}");
        }
    }
}
