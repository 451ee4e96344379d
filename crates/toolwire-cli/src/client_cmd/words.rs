//! Splitting a `--stdio "command args"` string into words, the way a POSIX
//! shell would for the simple cases: whitespace separates words, single
//! quotes keep everything literally, double quotes keep everything but `\"`
//! and `\\`, and a backslash outside quotes escapes the next character. No
//! variables, globs or substitutions.

use anyhow::bail;

/// The words of `line`.
pub(crate) fn split(line: &str) -> anyhow::Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => bail!("unterminated single quote in {line:?}"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => bail!("unterminated double quote in {line:?}"),
                        },
                        Some(c) => word.push(c),
                        None => bail!("unterminated double quote in {line:?}"),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => bail!("trailing backslash in {line:?}"),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split(r#"  toolwire  serve --x 'a b' "c \"d\" \n" e\ f ''"#).expect("ok"),
            ["toolwire", "serve", "--x", "a b", "c \"d\" \\n", "e f", ""]
        );
        assert!(split("").expect("ok").is_empty());
        assert!(split("'open").is_err());
        assert!(split("\"open").is_err());
    }
}
