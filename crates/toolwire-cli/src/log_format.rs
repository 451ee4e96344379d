//! How the client commands (`call`, `list`, `read`, ...) print their own
//! warnings: `toolwire: warning: ...`, like their errors, without the
//! timestamp and target a server's log lines carry.

use std::fmt;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// `toolwire: LEVEL: message field=value`.
pub(crate) struct Plain;

impl<S, N> FormatEvent<S, N> for Plain
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // The level word in colour on a terminal (`NO_COLOR` turns it off).
        let (level, colour) = match *event.metadata().level() {
            Level::ERROR => ("error", "31"),
            Level::WARN => ("warning", "33"),
            Level::INFO => ("info", "32"),
            Level::DEBUG => ("debug", "34"),
            Level::TRACE => ("trace", "35"),
        };
        if writer.has_ansi_escapes() {
            write!(writer, "toolwire: \x1b[1;{colour}m{level}\x1b[0m: ")?;
        } else {
            write!(writer, "toolwire: {level}: ")?;
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
