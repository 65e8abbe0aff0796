//! [`Report`]: an error with its sources, for a person to read.

use std::error::Error as StdError;
use std::fmt;

/// An error followed by its [`source`](StdError::source)s, `: `-separated:
/// `the resource store failed: store unavailable: redis get: connection refused`.
///
/// The errors of this workspace say in their `Display` only what failed at their own layer and keep
/// the cause as their source (hyper's and axum's way); a message for a person — a log line, the
/// text a model reads — shows the whole chain with `Report`. A source whose text already ends what
/// was written (an error that quotes its cause, as many drivers' errors do) is not written again.
///
/// ```
/// use dual_core::error::Report;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("the resource store failed")]
/// struct StoreFailed(#[source] std::io::Error);
///
/// let error = StoreFailed(std::io::Error::other("connection refused"));
/// assert_eq!(error.to_string(), "the resource store failed");
/// assert_eq!(
///     Report::new(&error).to_string(),
///     "the resource store failed: connection refused"
/// );
/// ```
#[derive(Clone, Copy)]
pub struct Report<'a>(&'a (dyn StdError + 'static));

impl<'a> Report<'a> {
    /// The report of `error` and its sources.
    #[must_use]
    pub fn new(error: &'a (dyn StdError + 'static)) -> Self {
        Self(error)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut written = self.0.to_string();
        f.write_str(&written)?;
        let mut next = self.0.source();
        while let Some(inner) = next {
            let text = inner.to_string();
            if !written.ends_with(&text) {
                write!(f, ": {text}")?;
                written = text;
            }
            next = inner.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::Report;

    /// An error that names its cause in its own text, like many drivers' errors do.
    #[derive(Debug, thiserror::Error)]
    #[error("{0}: {1}")]
    struct Quoting(&'static str, #[source] std::io::Error);

    /// An error that leaves its cause to `source`.
    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Layer(&'static str, #[source] Box<dyn std::error::Error + Send + Sync>);

    #[test]
    fn writes_every_source_once_in_order() {
        let plain = std::io::Error::other("refused");
        assert_eq!(Report::new(&plain).to_string(), "refused");

        let chain = Layer(
            "the resource store failed",
            Box::new(Layer(
                "store unavailable: postgres get",
                Box::new(std::io::Error::other("refused")),
            )),
        );
        assert_eq!(
            Report::new(&chain).to_string(),
            "the resource store failed: store unavailable: postgres get: refused"
        );

        let quoting = Layer(
            "store unavailable: redis get",
            Box::new(Quoting("io", std::io::Error::other("refused"))),
        );
        assert_eq!(
            Report::new(&quoting).to_string(),
            "store unavailable: redis get: io: refused",
            "a cause its parent already quotes is not repeated"
        );
    }
}
