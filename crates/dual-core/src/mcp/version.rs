//! MCP protocol versions, and what each one lets a tool result carry.

/// An MCP protocol revision, as negotiated by `initialize` (or named per request from 2026-07-28 on).
///
/// Rendering follows it: [`resource_link`](super::ContentBlock::ResourceLink) content,
/// `structuredContent` and a tool's `outputSchema` exist from 2025-06-18 on, so earlier revisions get
/// text blocks only.
///
/// ```
/// use dual_core::mcp::ProtocolVersion;
/// assert_eq!(ProtocolVersion::from_date("2025-03-26"), ProtocolVersion::V2025_03_26);
/// assert!(!ProtocolVersion::V2025_03_26.has_resource_link());
/// // A revision newer than this crate knows renders as the newest one it knows.
/// assert_eq!(ProtocolVersion::from_date("2099-01-01"), ProtocolVersion::LATEST);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`: text, image and embedded-resource content; no structured output.
    V2024_11_05,
    /// `2025-03-26`: adds audio content and tool annotations.
    V2025_03_26,
    /// `2025-06-18`: adds `resource_link` content, `structuredContent`, `outputSchema` and titles.
    V2025_06_18,
    /// `2025-11-25`: adds icons.
    V2025_11_25,
    /// `2026-07-28`: per-request lifecycle.
    #[default]
    V2026_07_28,
}

impl ProtocolVersion {
    /// The newest revision this crate knows.
    pub const LATEST: Self = Self::V2026_07_28;

    /// Every known revision, oldest first.
    pub const ALL: [Self; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The revision's date, e.g. `"2025-06-18"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// The newest known revision not after `date` (`YYYY-MM-DD`; dates order lexically); the oldest
    /// known one for anything earlier or unparsable, so a result never carries what a client may not
    /// know.
    #[must_use]
    pub fn from_date(date: &str) -> Self {
        let is_date = date.len() == 10
            && date.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            });
        if !is_date {
            return Self::V2024_11_05;
        }
        Self::ALL
            .into_iter()
            .rev()
            .find(|version| version.as_str() <= date)
            .unwrap_or(Self::V2024_11_05)
    }

    /// Whether `content` may hold `resource_link` blocks (2025-06-18 and later).
    #[must_use]
    pub fn has_resource_link(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Whether a tool result may carry `structuredContent` and a tool an `outputSchema`
    /// (2025-06-18 and later).
    #[must_use]
    pub fn has_structured_content(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Whether tools, resources and templates may carry a `title` and `_meta` (2025-06-18 and later).
    #[must_use]
    pub fn has_titles(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Whether a tool may carry `annotations` (2025-03-26 and later).
    #[must_use]
    pub fn has_tool_annotations(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// Whether tools, resources and templates may carry `icons` (2025-11-25 and later).
    #[must_use]
    pub fn has_icons(self) -> bool {
        self >= Self::V2025_11_25
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_map_to_the_newest_known_revision_not_after_them() {
        for version in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::from_date(version.as_str()), version);
        }
        assert_eq!(
            ProtocolVersion::from_date("2025-07-01"),
            ProtocolVersion::V2025_06_18
        );
        assert_eq!(
            ProtocolVersion::from_date("2024-01-01"),
            ProtocolVersion::V2024_11_05
        );
        assert_eq!(
            ProtocolVersion::from_date("garbage"),
            ProtocolVersion::V2024_11_05
        );
        assert_eq!(ProtocolVersion::from_date("2099-01-01"), ProtocolVersion::LATEST);
        assert_eq!(ProtocolVersion::from_date(""), ProtocolVersion::V2024_11_05);
    }

    #[test]
    fn features_start_where_the_schemas_add_them() {
        use ProtocolVersion as V;
        assert!(!V::V2025_03_26.has_resource_link() && V::V2025_06_18.has_resource_link());
        assert!(!V::V2025_03_26.has_structured_content() && V::V2025_06_18.has_structured_content());
        assert!(!V::V2024_11_05.has_tool_annotations() && V::V2025_03_26.has_tool_annotations());
        assert!(!V::V2025_06_18.has_icons() && V::V2025_11_25.has_icons());
    }
}
