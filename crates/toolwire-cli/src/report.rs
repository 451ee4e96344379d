//! How `toolwire` reports a failure on stderr: one line saying what failed,
//! the causes that add something to it, and a hint where one helps. Never a
//! backtrace: those are for bugs (panics), not for a server that said no.

use toolwire::ClientError;

/// The report for `err`, ending in a newline.
///
/// Each cause is shown once: a cause whose text the line just before already
/// contains (an error that prints its source inside its own message) is
/// left out.
pub(crate) fn render(err: &anyhow::Error) -> String {
    let mut lines: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        let text = text.trim();
        if text.is_empty() || lines.last().is_some_and(|l| l.contains(text)) {
            continue;
        }
        lines.push(text.to_owned());
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            out.push_str("toolwire: error: ");
        } else {
            out.push_str("  caused by: ");
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(hint) = hint(err) {
        out.push_str("  hint: ");
        out.push_str(hint);
        out.push('\n');
    }
    out
}

/// Advice for the failures a newcomer meets first.
fn hint(err: &anyhow::Error) -> Option<&'static str> {
    err.chain()
        .find_map(|c| c.downcast_ref::<ClientError>())
        .and_then(|e| match e {
            ClientError::Http { status: 404, .. } => {
                Some("is the path right? toolwire serves at /mcp")
            }
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::render;
    use anyhow::Context as _;

    #[test]
    fn a_cause_repeated_inside_its_parent_is_shown_once() {
        let io = std::io::Error::other("no such file");
        let err = Err::<(), _>(io)
            .context("cannot start the server process: no such file")
            .context("list failed")
            .expect_err("an error");
        assert_eq!(
            render(&err),
            "toolwire: error: list failed\n  caused by: cannot start the server process: no such file\n"
        );
    }

    #[test]
    fn a_404_gets_a_hint_about_the_path() {
        let err = Err::<(), _>(toolwire::ClientError::Http {
            url: "http://127.0.0.1:1/wrong".into(),
            status: 404,
            body: String::new(),
        })
        .context("tools/list failed")
        .expect_err("an error");
        let text = render(&err);
        assert!(
            text.contains("http://127.0.0.1:1/wrong answered HTTP 404 Not Found\n"),
            "{text}"
        );
        assert!(text.contains("hint: is the path right?"), "{text}");
    }
}
