//! Talking to the person at the terminal: a progress bar on stderr, and
//! answers to the server's elicitation requests, from `--input key=JSON` or
//! prompted field by field when stdin is a terminal.

use anyhow::{Context as _, bail};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::{Arc, Mutex};
use toolwire::InputError;
use toolwire::proto::types::{
    DetailedTask, ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitResult,
    PrimitiveSchemaDefinition, ProgressNotificationParams,
};

const BAR_WIDTH: usize = 30;

/// How a call's progress shows on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ProgressShow {
    /// Not at all.
    #[default]
    Hidden,
    /// A one-line bar, redrawn (stderr is a terminal).
    Bar,
    /// One line per notification (`--progress`, stderr is not a terminal).
    Lines,
}

/// Progress on stderr: a one-line bar redrawn on a terminal, or plain
/// lines for a log.
#[derive(Clone, Default)]
pub(crate) struct ProgressBar {
    drawn: Arc<Mutex<bool>>,
    show: ProgressShow,
    /// The task status last shown, so that a log gets a line per change.
    last_status: Arc<Mutex<String>>,
}

impl ProgressBar {
    pub(crate) fn new(show: ProgressShow) -> Self {
        Self {
            drawn: Arc::default(),
            show,
            last_status: Arc::default(),
        }
    }

    /// Shows `p`.
    pub(crate) fn update(&self, p: &ProgressNotificationParams) {
        match self.show {
            ProgressShow::Hidden => {}
            ProgressShow::Lines => {
                let mut stderr = std::io::stderr().lock();
                let _ = writeln!(stderr, "{}", progress_line(p));
                let _ = stderr.flush();
            }
            ProgressShow::Bar => self.draw(p),
        }
    }

    fn draw(&self, p: &ProgressNotificationParams) {
        let mut line = match p.total {
            Some(total) if total > 0.0 => {
                let fraction = (p.progress / total).clamp(0.0, 1.0);
                // Both are in 0..=BAR_WIDTH, so the casts are exact.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let filled = (fraction * BAR_WIDTH as f64).round() as usize;
                format!(
                    "[{}{}] {:>3.0}%",
                    "#".repeat(filled),
                    ".".repeat(BAR_WIDTH - filled),
                    fraction * 100.0
                )
            }
            _ => format!("[{}] {}", "?".repeat(3), p.progress),
        };
        if let Some(m) = &p.message {
            line.push(' ');
            line.push_str(m);
        }
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r\x1b[2K{line}");
        let _ = stderr.flush();
        if let Ok(mut d) = self.drawn.lock() {
            *d = true;
        }
    }

    /// Shows the status of the task a call became (`working: page 2 of
    /// 10`): redrawn on a terminal, a line per change in a log.
    pub(crate) fn task_status(&self, task: &DetailedTask) {
        if self.show == ProgressShow::Hidden {
            return;
        }
        let line = task_line(task);
        if let Ok(mut last) = self.last_status.lock() {
            if *last == line {
                return;
            }
            last.clone_from(&line);
        }
        let mut stderr = std::io::stderr().lock();
        if self.show == ProgressShow::Lines {
            let _ = writeln!(stderr, "{line}");
        } else {
            let _ = write!(stderr, "\r\x1b[2K{line}");
            if let Ok(mut d) = self.drawn.lock() {
                *d = true;
            }
        }
        let _ = stderr.flush();
    }

    /// Erases the bar, if one was drawn.
    pub(crate) fn clear(&self) {
        if self.drawn.lock().is_ok_and(|d| *d) {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
        }
    }
}

/// A task's status as one line: `task working: page 2 of 10`.
pub(crate) fn task_line(task: &DetailedTask) -> String {
    let status = serde_json::to_value(task.state.status())
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    match task.info.status_message.as_deref() {
        Some(m) if !m.is_empty() => format!("task {status}: {m}"),
        _ => format!("task {status}"),
    }
}

/// One progress notification as a log line: `progress 2/3 (67%) message`.
pub(crate) fn progress_line(p: &ProgressNotificationParams) -> String {
    let mut line = match p.total {
        Some(total) if total > 0.0 => format!(
            "progress {}/{} ({:.0}%)",
            p.progress,
            total,
            (p.progress / total * 100.0).clamp(0.0, 100.0)
        ),
        _ => format!("progress {}", p.progress),
    };
    if let Some(m) = &p.message {
        line.push(' ');
        line.push_str(m);
    }
    line
}

/// Answers given with `--input KEY=JSON`: the content of an accepted form,
/// or the word `decline` or `cancel`.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    by_key: HashMap<String, ElicitResult>,
    /// The keys the server asked for.
    used: Mutex<Vec<String>>,
}

impl Answers {
    pub(crate) fn parse(inputs: &[String]) -> anyhow::Result<Self> {
        let mut by_key = HashMap::new();
        for input in inputs {
            let Some((key, raw)) = input.split_once('=') else {
                bail!("--input {input:?} is not KEY=JSON");
            };
            let answer = match raw.trim() {
                "decline" => ElicitResult {
                    action: ElicitAction::Decline,
                    content: None,
                },
                "cancel" => ElicitResult {
                    action: ElicitAction::Cancel,
                    content: None,
                },
                json => match serde_json::from_str(json)
                    .with_context(|| format!("--input {key}: not JSON"))?
                {
                    Value::Object(content) => ElicitResult {
                        action: ElicitAction::Accept,
                        content: Some(content),
                    },
                    other => bail!(
                        "--input {key}: expected a JSON object (the form's content), or decline or cancel; got {other}"
                    ),
                },
            };
            by_key.insert(key.to_owned(), answer);
        }
        Ok(Self {
            by_key,
            used: Mutex::default(),
        })
    }

    fn mark_used(&self, key: &str) {
        if let Ok(mut used) = self.used.lock()
            && !used.iter().any(|k| k == key)
        {
            used.push(key.to_owned());
        }
    }

    /// The `--input` keys (other than `*`) no request of the server named.
    pub(crate) fn unused(&self) -> Vec<String> {
        let used = self.used.lock().map(|u| u.clone()).unwrap_or_default();
        let mut unused: Vec<String> = self
            .by_key
            .keys()
            .filter(|k| *k != "*" && !used.contains(k))
            .cloned()
            .collect();
        unused.sort();
        unused
    }
}

/// Answers one elicitation: from `--input`, else by prompting on a
/// terminal, else an error that says how to answer.
pub(crate) async fn elicit(
    answers: Arc<Answers>,
    progress: ProgressBar,
    key: String,
    request: ElicitRequestParams,
) -> Result<ElicitResult, InputError> {
    // `*` answers any request no other KEY names: a legacy server's
    // elicitation/create carries no key.
    let given = answers.by_key.get(&key).map(|a| (key.as_str(), a));
    if let Some((named, answer)) = given.or_else(|| answers.by_key.get("*").map(|a| ("*", a))) {
        answers.mark_used(named);
        if let (ElicitRequestParams::Form(form), Some(content)) = (&request, &answer.content) {
            // Spec: client/elicitation.mdx — accepted content matches the
            // requested schema.
            super::form_check::check(&form.requested_schema, content)
                .map_err(|why| InputError::new(format!("--input {named}: {why}")))?;
        }
        return Ok(answer.clone());
    }
    let message = match &request {
        ElicitRequestParams::Form(f) => f.message.clone(),
        ElicitRequestParams::Url(u) => u.message.clone(),
    };
    if !std::io::stdin().is_terminal() {
        return Err(InputError::new(format!(
            "the server asks: {message:?} (input {key:?}); stdin is not a terminal, so answer with --input {key}=JSON, --input {key}=decline or --input {key}=cancel"
        )));
    }
    progress.clear();
    let ElicitRequestParams::Form(form) = request else {
        return Err(InputError::new(format!(
            "the server asks for a URL-mode elicitation ({message:?}), which this command does not support"
        )));
    };
    tokio::task::spawn_blocking(move || prompt_form(&form))
        .await
        .map_err(|e| InputError::new(format!("the prompt failed: {e}")))?
        .map_err(|e| InputError::new(format!("{e:#}")))
}

/// Asks for each field of the form on stderr and reads stdin. End of input
/// (Ctrl-D) cancels; the word `!decline` declines.
fn prompt_form(form: &ElicitRequestFormParams) -> anyhow::Result<ElicitResult> {
    let stdin = std::io::stdin();
    let mut stderr = std::io::stderr();
    writeln!(stderr, "\n{}", form.message)?;
    writeln!(
        stderr,
        "(answer each field; !decline declines, Ctrl-D cancels)"
    )?;
    let required = form.requested_schema.required.clone().unwrap_or_default();
    let mut content = Map::new();
    for (name, field) in &form.requested_schema.properties {
        let is_required = required.contains(name);
        let about = serde_json::to_value(field).unwrap_or_default();
        let label = about
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or(name.as_str())
            .to_owned();
        if let Some(d) = about.get("description").and_then(Value::as_str) {
            writeln!(stderr, "  {label}: {d}")?;
        }
        loop {
            let (hint, default) = describe(field);
            write!(
                stderr,
                "  {label}{} [{hint}]{}: ",
                if is_required { "*" } else { "" },
                default
                    .as_ref()
                    .map(|d| format!(" (default {d})"))
                    .unwrap_or_default()
            )?;
            stderr.flush()?;
            let mut line = String::new();
            if stdin.lock().read_line(&mut line)? == 0 {
                writeln!(stderr)?;
                return Ok(ElicitResult {
                    action: ElicitAction::Cancel,
                    content: None,
                });
            }
            let line = line.trim();
            if line == "!decline" {
                return Ok(ElicitResult {
                    action: ElicitAction::Decline,
                    content: None,
                });
            }
            if line.is_empty() {
                if let Some(d) = default {
                    content.insert(name.clone(), d);
                    break;
                }
                if !is_required {
                    break;
                }
                writeln!(stderr, "    {label} is required")?;
                continue;
            }
            match read_value(field, line) {
                Ok(v) => {
                    content.insert(name.clone(), v);
                    break;
                }
                Err(e) => writeln!(stderr, "    {e}")?,
            }
        }
    }
    Ok(ElicitResult {
        action: ElicitAction::Accept,
        content: Some(content),
    })
}

/// A hint of what to type, and the default, for a field.
fn describe(field: &PrimitiveSchemaDefinition) -> (String, Option<Value>) {
    use PrimitiveSchemaDefinition as P;
    match field {
        P::String(s) => ("text".into(), s.default.clone().map(Value::String)),
        P::Number(n) => (
            format!("{:?}", n.kind).to_lowercase(),
            n.default.and_then(Number::from_f64).map(Value::Number),
        ),
        P::Boolean(b) => ("y/n".into(), b.default.map(Value::Bool)),
        P::UntitledSingleSelectEnum(e) => {
            (e.values.join("|"), e.default.clone().map(Value::String))
        }
        P::TitledSingleSelectEnum(e) => (
            e.one_of
                .iter()
                .map(|o| o.value.as_str())
                .collect::<Vec<_>>()
                .join("|"),
            e.default.clone().map(Value::String),
        ),
        P::LegacyTitledEnum(_) => ("one of the listed values".into(), None),
        P::UntitledMultiSelectEnum(e) => (
            format!("comma-separated: {}", e.items.values.join(",")),
            None,
        ),
        P::TitledMultiSelectEnum(_) => ("comma-separated values".into(), None),
    }
}

/// The typed value of an answer.
fn read_value(field: &PrimitiveSchemaDefinition, line: &str) -> anyhow::Result<Value> {
    use PrimitiveSchemaDefinition as P;
    Ok(match field {
        P::Boolean(_) => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => bail!("answer y or n"),
        },
        P::Number(_) => {
            let n: Number = serde_json::from_str(line).context("not a number")?;
            Value::Number(n)
        }
        P::UntitledSingleSelectEnum(e) if !e.values.iter().any(|v| v == line) => {
            bail!("choose one of {}", e.values.join(", "))
        }
        P::UntitledMultiSelectEnum(_) | P::TitledMultiSelectEnum(_) => Value::Array(
            line.split(',')
                .map(|s| Value::String(s.trim().to_owned()))
                .collect(),
        ),
        _ => Value::String(line.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_read_well_in_a_log() {
        let p =
            |progress: f64, total: Option<f64>, message: Option<&str>| ProgressNotificationParams {
                progress_token: toolwire::proto::types::ProgressToken::Integer(1),
                progress,
                total,
                message: message.map(str::to_owned),
                meta: None,
            };
        assert_eq!(
            progress_line(&p(2.0, Some(3.0), Some("step 2"))),
            "progress 2/3 (67%) step 2"
        );
        assert_eq!(progress_line(&p(7.0, None, None)), "progress 7");
    }

    #[test]
    fn inputs_parse_to_answers() {
        let a = Answers::parse(&[
            r#"confirm={"confirm": true}"#.to_owned(),
            "other=decline".to_owned(),
        ])
        .expect("ok");
        assert_eq!(a.by_key["confirm"].action, ElicitAction::Accept);
        assert_eq!(a.by_key["other"].action, ElicitAction::Decline);
        assert!(Answers::parse(&["x=[1]".to_owned()]).is_err());
        assert!(Answers::parse(&["novalue".to_owned()]).is_err());
    }
}
