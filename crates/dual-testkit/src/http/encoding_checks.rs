//! Export negotiation: `Accept` the server cannot produce (406), and `Accept-Encoding` (gzip, zstd).

use http::header;

use super::Target;
use super::export_checks::FORMATS;
use super::support::{Ctx, Reply};

/// Rows of the encoding checks: enough for several frames.
pub(crate) const ROWS: u64 = 3_000;

pub(crate) async fn not_acceptable<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    let before = ctx.access_count(id).await;
    for accept in [
        "image/png",
        "text/html",
        "text/csv;q=0",
        "application/json;q=0, application/x-ndjson;q=0, text/csv;q=0",
        "application/xml, image/*",
    ] {
        let message = ctx
            .data(id, "")
            .accept(accept)
            .send()
            .await
            .error(check, 406, "not_acceptable");
        for produced in FORMATS {
            assert!(
                message.contains(produced),
                "[{check}] {accept}: the message lists {produced}: {message}"
            );
        }
        let head = ctx.head(&format!("/{id}/data")).accept(accept).send().await;
        head.expect_no_body(&format!("{check} HEAD {accept}"), 406);
    }
    assert_eq!(
        ctx.access_count(id).await,
        before,
        "[{check}] refused exports do not count"
    );
    // Refusing one format still allows another; a wildcard allows the default.
    for (accept, content_type) in [
        (
            "application/json;q=0, text/csv",
            "text/csv; charset=utf-8; header=present",
        ),
        ("image/png, */*;q=0.1", "application/json"),
        ("text/*", "text/csv; charset=utf-8; header=present"),
    ] {
        let reply = ctx.data(id, "limit=2").accept(accept).send().await;
        let check = format!("{check} {accept}");
        reply.expect_status(&check, 200);
        reply.expect_header(&check, header::CONTENT_TYPE, content_type);
    }
}

async fn export<T: Target>(
    ctx: &Ctx<T>,
    check: &str,
    id: dual_core::ResourceId,
    accept: &str,
    encoding: &str,
) -> Reply {
    let encoding = Some(encoding).filter(|e| !e.is_empty());
    let reply = ctx
        .data(id, "sort=score:desc&offset=7&limit=900")
        .accept(accept)
        .header_opt(header::ACCEPT_ENCODING, encoding)
        .send()
        .await;
    reply.expect_complete(&format!("{check} {accept} {encoding:?}"));
    reply
}

/// Compressed exports decompress to exactly the uncompressed export; `q=0` and unknown codings get
/// the identity; compression never applies to JSON documents other than exports.
pub(crate) async fn compression<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    for accept in FORMATS {
        let plain = export(ctx, check, id, accept, "").await;
        assert_eq!(plain.header(header::CONTENT_ENCODING), "", "[{check}] identity");
        for (encoding, expected) in [
            ("gzip", "gzip"),
            ("zstd", "zstd"),
            ("gzip, zstd", "zstd"),
            ("zstd;q=0.5, gzip", "gzip"),
            ("gzip;q=0", ""),
            ("br, deflate", ""),
            ("identity", ""),
        ] {
            let expected = if cfg!(feature = "compression") {
                expected
            } else {
                ""
            };
            let reply = export(ctx, check, id, accept, encoding).await;
            assert_eq!(
                reply.header(header::CONTENT_ENCODING),
                expected,
                "[{check}] {accept} {encoding}: Content-Encoding"
            );
            if cfg!(feature = "compression") {
                reply.expect_vary(&format!("{check} {accept} {encoding}"), "accept-encoding");
            }
            let decoded = decode(expected, &reply.body)
                .unwrap_or_else(|e| panic!("[{check}] {accept} {encoding}: does not decode: {e}"));
            assert!(
                decoded == plain.body,
                "[{check}] {accept} {encoding}: decodes to the uncompressed export"
            );
            if !expected.is_empty() {
                assert!(
                    reply.body.len() < plain.body.len() / 2,
                    "[{check}] {accept} {encoding}: {} of {} bytes",
                    reply.body.len(),
                    plain.body.len()
                );
            }
        }
    }
    let head = ctx
        .head(&format!("/{id}/data"))
        .header(header::ACCEPT_ENCODING, "gzip")
        .send()
        .await;
    let expected = if cfg!(feature = "compression") { "gzip" } else { "" };
    assert_eq!(head.header(header::CONTENT_ENCODING), expected, "[{check}] HEAD");
    let metadata = ctx
        .get(&format!("/{id}"))
        .header(header::ACCEPT_ENCODING, "gzip, zstd")
        .send()
        .await;
    assert_eq!(
        metadata.header(header::CONTENT_ENCODING),
        "",
        "[{check}] metadata is never compressed"
    );
    metadata.ok_json(check);
}

fn decode(coding: &str, body: &[u8]) -> std::io::Result<Vec<u8>> {
    match coding {
        #[cfg(feature = "compression")]
        "gzip" => {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(body), &mut out)?;
            Ok(out)
        }
        #[cfg(feature = "compression")]
        "zstd" => zstd::stream::decode_all(body),
        "" => Ok(body.to_vec()),
        other => Err(std::io::Error::other(format!("unexpected coding {other}"))),
    }
}
