//! `https://` through rustls, against a TLS server on loopback with a test CA.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use dual_client::{ClientErrorCode, DualResponseClient, FetchOptions};
use http::{Response, header};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::{self, pki_types};

const PAGE: &str = r#"{"data":[{"id":1}],"total_count":1,"returned_count":1,"offset":0,"limit":100,"has_next":false,"has_previous":false,"next_offset":null}"#;

fn tls_file(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Serves `PAGE` over TLS; returns the base URL.
async fn tls_server() -> String {
    let certs = vec![pki_types::CertificateDer::from(tls_file("leaf.der"))];
    let key = pki_types::PrivateKeyDer::Pkcs8(tls_file("leaf.key.der").into());
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server certificate");
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(socket).await else {
                    return;
                };
                let service = service_fn(|_req| async {
                    let mut response = Response::new(Full::new(Bytes::from_static(PAGE.as_bytes())));
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, Infallible>(response)
                });
                drop(
                    http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await,
                );
            });
        }
    });
    format!("https://127.0.0.1:{}/resources", addr.port())
}

#[tokio::test]
async fn https_with_a_trusted_root() {
    let base = tls_server().await;
    let client = DualResponseClient::builder()
        .add_root_certificate(tls_file("ca.der"))
        .build()
        .expect("client");
    let parsed = client
        .resource(&format!("{base}/01JHF3K4Q5R6S7T8V9W0XYZABC"))
        .expect("URL");
    let page = parsed.fetch(FetchOptions::new()).await.expect("page over TLS");
    assert_eq!(page.returned_count, 1);
}

#[tokio::test]
async fn https_with_an_untrusted_certificate_fails_without_retrying() {
    let base = tls_server().await;
    let client = crate::support::client();
    let parsed = client
        .resource(&format!("{base}/01JHF3K4Q5R6S7T8V9W0XYZABC"))
        .expect("URL");
    let error = parsed
        .fetch(FetchOptions::new())
        .await
        .expect_err("unknown issuer");
    assert_eq!(error.code(), ClientErrorCode::Fetch);
    assert!(!error.is_retryable(), "{error:?}");
}
