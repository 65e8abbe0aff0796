//! Export negotiation: `Accept` the server cannot produce (406), and `Accept-Encoding` (gzip, zstd).

use http::{Method, header};

use super::Target;
use super::support::{Ctx, Reply};

/// Rows of the encoding checks: enough for several frames.
const ROWS: u64 = 3_000;

pub(crate) async fn run<T: Target>(ctx: &Ctx<T>, passed: &mut Vec<&'static str>) {
    let id = ctx.create(ROWS).await;
    not_acceptable(ctx, id).await;
    passed.push("export_not_acceptable");
    compression(ctx, id).await;
    passed.push("export_compression");
}

async fn not_acceptable<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId) {
    let check = "export_not_acceptable";
    let before = ctx.access_count(id).await;
    for accept in [
        "image/png",
        "text/html",
        "text/csv;q=0",
        "application/json;q=0, application/x-ndjson;q=0, text/csv;q=0",
        "application/xml, image/*",
    ] {
        let get = || {
            ctx.req(Method::GET, &format!("/{id}/data"))
                .header(header::ACCEPT, accept)
        };
        let message = ctx.send(get()).await.error(check, 406, "not_acceptable");
        for produced in ["application/json", "application/x-ndjson", "text/csv"] {
            assert!(
                message.contains(produced),
                "[{check}] {accept}: the message lists {produced}: {message}"
            );
        }
        let head = ctx
            .send(
                ctx.req(Method::HEAD, &format!("/{id}/data"))
                    .header(header::ACCEPT, accept),
            )
            .await;
        assert_eq!(head.status.as_u16(), 406, "[{check}] HEAD {accept}");
        assert!(head.body.is_empty(), "[{check}] HEAD {accept}: no body");
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
        let reply = ctx
            .send(
                ctx.req(Method::GET, &format!("/{id}/data?limit=2"))
                    .header(header::ACCEPT, accept),
            )
            .await;
        assert_eq!(reply.status.as_u16(), 200, "[{check}] {accept}");
        assert_eq!(
            reply.header(header::CONTENT_TYPE),
            content_type,
            "[{check}] {accept}"
        );
    }
}

async fn export<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, accept: &str, encoding: &str) -> Reply {
    let mut req = ctx
        .req(
            Method::GET,
            &format!("/{id}/data?sort=score:desc&offset=7&limit=900"),
        )
        .header(header::ACCEPT, accept);
    if !encoding.is_empty() {
        req = req.header(header::ACCEPT_ENCODING, encoding);
    }
    let reply = ctx.send(req).await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "[export_compression] {accept} {encoding}"
    );
    assert!(
        reply.body_error.is_none(),
        "[export_compression] {accept} {encoding}: body aborted"
    );
    reply
}

/// Compressed exports decompress to exactly the uncompressed export; `q=0` and unknown codings get
/// the identity; compression never applies to JSON documents other than exports.
async fn compression<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId) {
    let check = "export_compression";
    for accept in ["application/json", "application/x-ndjson", "text/csv"] {
        let plain = export(ctx, id, accept, "").await;
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
            let reply = export(ctx, id, accept, encoding).await;
            assert_eq!(
                reply.header(header::CONTENT_ENCODING),
                expected,
                "[{check}] {accept} {encoding}: Content-Encoding"
            );
            if cfg!(feature = "compression") {
                assert!(
                    reply
                        .header_all(header::VARY)
                        .to_ascii_lowercase()
                        .contains("accept-encoding"),
                    "[{check}] {accept} {encoding}: Vary: Accept-Encoding"
                );
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
        .send(
            ctx.req(Method::HEAD, &format!("/{id}/data"))
                .header(header::ACCEPT_ENCODING, "gzip"),
        )
        .await;
    let expected = if cfg!(feature = "compression") { "gzip" } else { "" };
    assert_eq!(head.header(header::CONTENT_ENCODING), expected, "[{check}] HEAD");
    let metadata = ctx
        .send(
            ctx.req(Method::GET, &format!("/{id}"))
                .header(header::ACCEPT_ENCODING, "gzip, zstd"),
        )
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
