//! [`StdioConfig`]: the stdio transport's settings.

use std::time::Duration;

/// The default [`StdioConfig::with_end_of_input_grace`].
const DEFAULT_END_OF_INPUT_GRACE: Duration = Duration::from_secs(5);

/// The longest [`StdioConfig::with_end_of_input_grace`].
const MAX_END_OF_INPUT_GRACE: Duration = Duration::from_secs(60);

/// Settings of [`serve_stdio_with`](crate::serve_stdio_with) and
/// [`serve_io_with`](crate::serve_io_with).
///
/// ```
/// use std::time::Duration;
/// use toolwire::StdioConfig;
///
/// let config = StdioConfig::new().with_end_of_input_grace(Duration::from_secs(2));
/// assert_eq!(config.end_of_input_grace(), Duration::from_secs(2));
/// ```
#[derive(Debug, Clone)]
pub struct StdioConfig {
    end_of_input_grace: Duration,
}

impl Default for StdioConfig {
    fn default() -> Self {
        Self {
            end_of_input_grace: DEFAULT_END_OF_INPUT_GRACE,
        }
    }
}

impl StdioConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long requests still running when the input ends may finish and
    /// be answered before they are cancelled (1 ms to 60 s; default 5 s).
    /// A client that writes its requests and closes its end (`echo … |
    /// server`) still reads their answers.
    #[must_use]
    pub fn with_end_of_input_grace(mut self, grace: Duration) -> Self {
        self.end_of_input_grace = grace.clamp(Duration::from_millis(1), MAX_END_OF_INPUT_GRACE);
        self
    }

    /// See [`with_end_of_input_grace`](Self::with_end_of_input_grace).
    pub fn end_of_input_grace(&self) -> Duration {
        self.end_of_input_grace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grace_is_kept_within_a_millisecond_and_a_minute() {
        let c = StdioConfig::new();
        assert_eq!(c.end_of_input_grace(), Duration::from_secs(5));
        let c = c.with_end_of_input_grace(Duration::ZERO);
        assert_eq!(c.end_of_input_grace(), Duration::from_millis(1));
        let c = c.with_end_of_input_grace(Duration::from_secs(3600));
        assert_eq!(c.end_of_input_grace(), Duration::from_secs(60));
    }
}
