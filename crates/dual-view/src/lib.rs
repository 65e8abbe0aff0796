//! The Dual Response result view: one self-contained HTML document that shows a person every row of
//! a result, built into the crate (no JavaScript toolchain, nothing loaded from the network).
//!
//! The same document runs over two transports:
//!
//! * as an **MCP Apps view** (`io.modelcontextprotocol/ui`): a server lists it as the `ui://` resource
//!   [`VIEW_URI`] with the MIME type [`MIME_TYPE`] and names it in a tool's `_meta.ui.resourceUri`
//!   (`dual-rmcp`'s feature `apps` does both); the host renders it in a sandboxed iframe, hands it
//!   the tool result and proxies its `resources/read` and `tools/call` to the server;
//! * as a **page of the REST API**: `dual-http` serves it at `GET {prefix}/{id}/view`, with
//!   [`TRANSPORT_MARKER`] replaced by [`REST_TRANSPORT_MARKER`], and the page reads the REST API
//!   it was served from.
//!
//! # What the view does
//!
//! It shows the result's title, its total count, its columns with their types and its state
//! (`pending` with the rows so far, `ready`, or `failed` with the reason), and scrolls through
//! **every** row with bounded memory: the grid's body has the full height (scaled past 8,000,000
//! pixels, so any row count works), a pool of row elements no larger than the visible rows plus an
//! overscan is recycled as the person scrolls, and rows are read 250 at a time on demand into a
//! cache of at most 40 pages (least recently used evicted; requests de-duplicated, at most four in
//! flight, answers from before a sort change ignored, a page the server cut short read on from
//! `next_offset`). The sample in the tool result is painted at once; page 0 follows.
//!
//! A page read the server had no capacity for (REST: `503 overloaded` with `Retry-After`; Apps: the
//! JSON-RPC error whose `data.error` is `OVERLOADED`, e.g. every sort slot taken) is not a failure: it
//! is asked for again after `Retry-After` (Apps: after 2 s, then longer, up to 10 s) for as long as its
//! rows are on screen, the sort stays, `#dv-message` says the server is busy (`data-kind="busy"`)
//! until the rows come, and `scrollToRow` keeps waiting for them. Any other failed read shows in
//! `#dv-error`, rejects the `scrollToRow` promises of its rows, and is retried after a growing delay.
//!
//! A header click sorts on the server (ascending, descending, unsorted; `aria-sort`); a row
//! number jumps anywhere; CSV, NDJSON and Parquet download the whole result (in the current order); a cell
//! (Ctrl/Cmd+C) or a row (Shift+Ctrl/Cmd+C, or the button, as tab-separated text) is copied. It
//! is an ARIA grid (row and column counts and indexes, a roving tabindex, arrows, Page Up/Down,
//! Home/End, Ctrl+Home/End) with a live region announcing loading, sorting and counts. It takes
//! its colours and fonts from the host's style variables (`hostContext.styles.variables`, set on
//! `:root`) over its own light and dark palettes (`hostContext.theme`, else
//! `prefers-color-scheme`). Every value is written as text (`textContent`), never as markup.
//!
//! Each column header shows the result's **column profile** (`dual_core::profile::Profile`) when there is
//! one: a sparkline built with SVG APIs (the histogram's bars for numbers, else the top values as one
//! stacked bar of the rows, else none) and `N% null · D distinct` (`~D` when estimated). The full profile
//! (type, values, nulls, distinct, min and max, mean, p50 and p95, NaN and infinities, a mixed column's
//! types, the top values with their counts, `~` on estimates, `(cut)` on cut text) shows in one popover
//! (`role="tooltip"`, built when shown) on hover and on keyboard focus of the header, which names it in
//! `aria-describedby` while it shows; Escape hides it. `C` on a header, or its chart button, opens a chart
//! panel (`role="dialog"`): the histogram or the top values (and the other values and nulls) as an SVG bar
//! chart with axis labels, `role="img"` with an `aria-label` that summarises it, its bars in the host's
//! `--color-text-info`; Escape or Close shuts it and returns the focus to the header. The profile comes
//! with the tool result (`structuredContent.profile`) or is read (below) every 2 s while it is not there
//! yet or not complete (the snapshot still written), 150 reads at most; a result without one (live,
//! `no_profile`) or a failed read leaves the headers plain and shows no error.
//!
//! The person **refines** the result shown (docs/DESIGN.md §4): a filter box takes a SQL condition over the
//! result's columns (`SELECT * FROM result WHERE …`), and the group-by controls (a column, chosen also by
//! `G` on its header, and optionally a numeric column to sum) count its rows per value (`SELECT "col",
//! COUNT(*) AS "count"[, SUM("num") AS "sum"] FROM result GROUP BY "col" ORDER BY "count" DESC, "col"`).
//! The refined result comes from the server and is shown like any result, with its own URI; a breadcrumb
//! and Back return to each result it refines, one step at a time. The SQL's error shows next to the
//! filter box and the result stays. In a host that advertises `hostCapabilities.updateModelContext`, "Send
//! to the model" hands a refined result to the model (`ui/update-model-context`: its SQL, URI, row count
//! and columns).
//!
//! Text from the data or the model's SQL (cells, column names, the title, the sort field) is laid out
//! on its own: `dir="auto"` and `unicode-bidi: isolate`, so right-to-left text in one cell cannot
//! reorder its neighbours. Characters that act instead of showing are shown as a marker `⟨U+XXXX⟩`:
//! the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069; a value
//! `U+202E gnp.exe` shows as `⟨U+202E⟩gnp.exe`, never as `exe.png`), the C0 and C1 controls (`ESC`
//! as `⟨U+001B⟩`; tab, line feed and carriage return show as spaces) and the line and paragraph
//! separators. Display only: a copy and a download take the value exact.
//!
//! # Transports
//!
//! * **MCP Apps** ([`TRANSPORT_MARKER`]): JSON-RPC 2.0 over `postMessage` with the host:
//!   `ui/initialize` (then `ui/notifications/initialized`), the tool result from
//!   `ui/notifications/tool-result` (`structuredContent`: `resource.uri`, `metadata.total_count`,
//!   `metadata.columns`, `metadata.status`, `results`), pages through `resources/read` on
//!   `resource://{id}?offset=…&limit=…&sort=field:asc|desc` (a pending or failed status object
//!   is polled or shown), downloads through `tools/call` of the app-only tool
//!   `dual_download_link`, then `ui/download-file` with the link as a `resource_link`
//!   (`{id}.{ext}`, its media type) when the `ui/initialize` result's `hostCapabilities` has
//!   `downloadFile`, else `ui/open-link` with the link; the column profile through `resources/read`
//!   on `resource://{id}/profile` (the profile, `{"status": "pending"}` or `{"status": "no_profile"}`);
//!   `ui/request-display-mode` for fullscreen when the host offers it, and
//!   `ui/notifications/size-changed` when its size changes inline; refinements through `tools/call` of
//!   the server's tool `refine` with `{uri, sql}` (answered as the `query` tool is; a JSON-RPC "unknown
//!   tool" takes the controls away) and `ui/update-model-context` when the host takes it.
//! * **REST** ([`REST_TRANSPORT_MARKER`]): the resource's path is the page's path without
//!   `/view`; `GET` gives the metadata, `POST` a page, `/data?format=csv|ndjson|parquet` the downloads
//!   (plain links), `/profile` the column profile (asked once the metadata says `ready` and its
//!   `consistency` is not `live`; `409 not_ready` is read again, `404 no_profile` is none), each with the
//!   page's `expires` and `token` parameters; `409 not_ready` polls. A refinement is `POST …/query` with
//!   `{"sql"}` and without the link parameters (`201` the refined result's structured content, `400` or
//!   `409 not_refinable` the server's message); the refined result is read at its own id's path.
//!
//! # DOM hooks
//!
//! Browser tests rely on these, and they stay stable: `#dv-title`; `#dv-total` (the total as
//! digits, `data-total` the exact integer); `#dv-status` (`data-status` = `pending`, `ready` or
//! `failed`); `#dv-grid` (`role="grid"`, `aria-rowcount` = rows + 1 for the header); rows
//! `[role=row][aria-rowindex]` (1-based, the header row is 1; `data-state` = `ready` or
//! `loading`); cells `[role=gridcell][data-column]`; header cells
//! `[role=columnheader][data-column=name]` (click to sort, `aria-sort`); `#dv-jump` (a row
//! number, Enter jumps); `#dv-download-csv`, `#dv-download-ndjson`, `#dv-download-parquet` (links in REST mode);
//! `#dv-fullscreen`; `#dv-error` (transport errors); `#dv-message` (the state's line, and
//! `data-kind="busy"` while a read the server was too busy for waits to be asked again); with a profile,
//! `#dv-grid[data-profile]`, in a header `.dv-prof` holding `svg.dv-spark` (`data-kind` = `histogram`,
//! one `rect.dv-spark-bar` per bin, or `top`, one per top value) and `.dv-profline`, and its
//! `.dv-chartbtn`; `#dv-profile-pop` (the popover); `#dv-chart` (the chart panel, `data-kind`) with
//! `#dv-chart-svg` (`role="img"`, one `rect.dv-chart-bar` per bar) and `#dv-chart-close`; refining:
//! `#dv-refine` (hidden when the server cannot refine) with `#dv-filter` (Enter applies it),
//! `#dv-filter-apply`, `#dv-group-col`, `#dv-group-sum`, `#dv-group-apply` and `#dv-refine-status`;
//! `#dv-refine-error` (`role="alert"`); `#dv-crumbs` (shown while a refinement is shown) with `#dv-back`,
//! `.dv-crumb` buttons (one per earlier result) and `#dv-to-model`.
//! `window.__dualView` has `ready` (a promise settled after the first paint of a result), `profile()`
//! (`{state, reads, profile}`: `idle`, `waiting`, `partial`, `complete`, `none` or `error`), `stats()`
//! (`{domRows, cachedPages, pagesFetched, busyRetries}`), `refinement()` (`{available, busy, depth, uri,
//! sql, stack, sentUri}`), `lastPaint` (the `performance.now()` of the
//! last paint of row values) and `scrollToRow(n)` (1-based; resolves once row `n` is painted with
//! its values).
//!
//! # Content Security Policy
//!
//! The document has one inline `<script>` and one inline `<style>`, no inline `style`
//! attributes or event handlers, no `eval` and nothing from the network, so it runs under
//! `default-src 'none'` with [`SCRIPT_HASH`] and [`STYLE_HASH`] allowed.
//!
//! ```
//! assert!(dual_view::VIEW_HTML.starts_with("<!doctype html>"));
//! assert!(dual_view::VIEW_HTML.contains(dual_view::TRANSPORT_MARKER));
//! assert_eq!(dual_view::MIME_TYPE, "text/html;profile=mcp-app");
//! assert!(dual_view::rest_page().contains(dual_view::REST_TRANSPORT_MARKER));
//! ```

/// The view: one HTML document with its style and script inline.
pub const VIEW_HTML: &str = include_str!("../view/view.html");

/// The MIME type of an MCP Apps HTML view.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The `ui://` URI a server lists the view under.
pub const VIEW_URI: &str = "ui://dual-response/result-view.html";

/// The tag in [`VIEW_HTML`] that tells the script which transport it runs over: the MCP Apps bridge.
pub const TRANSPORT_MARKER: &str = r#"<meta name="dual-response-transport" content="mcp-app">"#;

/// [`TRANSPORT_MARKER`] as [`rest_page`] has it: the page reads the REST API it was served from.
pub const REST_TRANSPORT_MARKER: &str = r#"<meta name="dual-response-transport" content="rest">"#;

/// The Content-Security-Policy source of the view's one inline `<script>`: `'sha256-…'` of the exact
/// text between `<script>` and `</script>` in [`VIEW_HTML`] (standard base64, padded).
///
/// A page serving the view allows its script with `script-src` and this value; a test recomputes it.
pub const SCRIPT_HASH: &str = "'sha256-K5neCwsmPehM6jDfKddydfDcZ24UW6tkXe4dx0FXj3M='";

/// The Content-Security-Policy source of the view's one inline `<style>`: `'sha256-…'` of the exact
/// text between `<style>` and `</style>` in [`VIEW_HTML`] (standard base64, padded).
///
/// A page serving the view allows its style with `style-src` and this value; a test recomputes it.
pub const STYLE_HASH: &str = "'sha256-kLRkAdhCxBiHt66+nWbC3+wr/1yat4nOj7tlPJIfHn0='";

/// The view as a page of the REST API ([`VIEW_HTML`] with [`REST_TRANSPORT_MARKER`]).
#[must_use]
pub fn rest_page() -> String {
    VIEW_HTML.replacen(TRANSPORT_MARKER, REST_TRANSPORT_MARKER, 1)
}

/// The toolbar's Parquet download button, as [`VIEW_HTML`] has it on a line of its own: a server that
/// cannot produce Parquet serves the page without it ([`without_parquet`]).
pub const PARQUET_BUTTON: &str =
    r#"<a class="dv-btn" id="dv-download-parquet" title="Download every row as Parquet">Parquet</a>"#;

/// `page` (the view) without the Parquet download button; its script then offers CSV and NDJSON only.
#[must_use]
pub fn without_parquet(page: &str) -> String {
    page.replacen(PARQUET_BUTTON, "", 1)
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use sha2::Digest as _;

    use super::{SCRIPT_HASH, STYLE_HASH, VIEW_HTML};

    /// The text between `<{tag}>` and `</{tag}>`, which must occur exactly once.
    fn inline(tag: &str) -> &'static str {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        assert_eq!(
            VIEW_HTML.matches(&format!("<{tag}")).count(),
            1,
            "exactly one <{tag}> element"
        );
        let start = VIEW_HTML
            .find(&open)
            .expect("an inline element without attributes")
            + open.len();
        let end = start + VIEW_HTML[start..].find(&close).expect("a closing tag");
        &VIEW_HTML[start..end]
    }

    fn csp_source(text: &str) -> String {
        let digest = sha2::Sha256::digest(text.as_bytes());
        format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(digest)
        )
    }

    #[test]
    fn the_parquet_button_can_be_left_out() {
        assert_eq!(VIEW_HTML.matches(super::PARQUET_BUTTON).count(), 1);
        let page = super::without_parquet(VIEW_HTML);
        assert!(!page.contains("id=\"dv-download-parquet\""), "the button is gone");
        assert!(page.contains("id=\"dv-download-ndjson\""));
    }

    #[test]
    fn script_hash_is_current() {
        let actual = csp_source(inline("script"));
        assert_eq!(SCRIPT_HASH, actual, "SCRIPT_HASH is stale: set it to {actual}");
    }

    #[test]
    fn style_hash_is_current() {
        let actual = csp_source(inline("style"));
        assert_eq!(STYLE_HASH, actual, "STYLE_HASH is stale: set it to {actual}");
    }

    /// Whether `html` holds ` on<letters>=`, the shape of an inline event handler attribute.
    fn has_event_handler_attribute(html: &str) -> bool {
        html.match_indices(" on").any(|(at, _)| {
            let rest = &html[at + 3..];
            let letters = rest.bytes().take_while(u8::is_ascii_lowercase).count();
            letters > 0 && rest[letters..].starts_with('=')
        })
    }

    #[test]
    fn the_view_obeys_a_strict_csp() {
        inline("script");
        inline("style");
        assert!(!VIEW_HTML.contains("style=\""), "no inline style attributes");
        assert!(
            !has_event_handler_attribute(VIEW_HTML),
            "no inline event handlers"
        );
        assert!(
            !VIEW_HTML.contains("http://") && !VIEW_HTML.contains("https://"),
            "nothing from the network"
        );
        assert!(
            !VIEW_HTML.contains("innerHTML") && !VIEW_HTML.contains("outerHTML"),
            "values go through textContent"
        );
        assert!(
            !VIEW_HTML.contains("eval(") && !VIEW_HTML.contains("new Function"),
            "no eval"
        );
    }

    /// The browser test (crates/dual-response-server/browser/run.mjs, "bidirectional text") checks the
    /// rendering; this checks that the pieces it relies on are in the document.
    #[test]
    fn text_is_isolated_and_hidden_characters_are_marked() {
        let style = inline("style");
        assert!(
            style.contains(".dv-cell, .dv-colname, .dv-title, .dv-bidi { unicode-bidi: isolate; }"),
            "cells, column names and the title are isolated"
        );
        let script = inline("script");
        assert!(
            script.contains(r#"cell.dir = "auto";"#),
            "every cell has dir=auto"
        );
        assert!(script.contains(r#"node.dir = "auto";"#), "column names too");
        let hidden = script
            .lines()
            .find(|line| line.contains("const HIDDEN = "))
            .expect("the hidden characters");
        for range in [
            r"\u0000-\u0008",
            r"\u000E-\u001F",
            r"\u007F-\u009F",
            r"\u061C",
            r"\u200E\u200F",
            r"\u2028\u2029",
            r"\u202A-\u202E",
            r"\u2066-\u2069",
        ] {
            assert!(hidden.contains(range), "{range} is marked: {hidden}");
        }
        assert!(
            script.contains("cell.textContent = visible("),
            "cells are shown through visible()"
        );
    }

    #[test]
    fn the_event_handler_check_finds_one() {
        assert!(has_event_handler_attribute("<img src=x onerror=alert(1)>"));
        assert!(!has_event_handler_attribute("<p>one = two</p>"));
    }
}
