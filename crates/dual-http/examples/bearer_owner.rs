//! Owner binding: `Authorization: Bearer <token>` maps to a tenant, and a resource created for one
//! tenant is `404 not_found` to every other caller.
//!
//! ```text
//! cargo run -p dual-http --example bearer_owner
//! ```
//!
//! The example drives the handler through `Service::call` and prints what each caller sees. In a
//! real deployment, verify the token (a JWT, a session lookup) in a middleware in front of the
//! handler and let the hook read the verified principal from the request's extensions.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use dual_core::Row;
use dual_http::{Authorize, DualHttp};
use dual_server::{CreateResponse, DualResponseServer, QueryExecutor, QueryStart, RowBatch, RowStream};
use http::request::Parts;
use http_body_util::{BodyExt, Empty};
use hyper::service::Service;
use serde_json::{Value, json};

/// Maps bearer tokens to tenants (a stand-in for real token verification).
#[derive(Debug)]
struct BearerTenants {
    tokens: HashMap<&'static str, &'static str>,
}

impl Authorize for BearerTenants {
    fn caller(&self, parts: &Parts) -> dual_server::Caller {
        let tenant = parts
            .headers
            .get(http::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .and_then(|token| self.tokens.get(token));
        dual_server::Caller::from_owner(tenant.map(|tenant| (*tenant).to_owned()))
    }
}

/// Three rows of invoices per tenant.
struct Invoices;

impl QueryExecutor for Invoices {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        start.started_with_count(3);
        let tenant = params["tenant"].as_str().unwrap_or_default().to_owned();
        let rows: Vec<Row> = (0..3u64)
            .map(|i| {
                json!({"invoice": i, "tenant": tenant})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        Box::pin(futures_util::stream::iter([Ok(RowBatch::Rows(rows))]))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = DualResponseServer::builder()
        .base_url("https://api.example.com/resources")
        .executor("invoices", Invoices)
        .build()?;
    // The MCP tool knows who asked (from its own session) and binds the resource to that tenant.
    let acme = server
        .create_response(CreateResponse::new("invoices", json!({"tenant": "acme"})).owner("acme"))
        .await?;

    let hook = BearerTenants {
        tokens: HashMap::from([("token-acme", "acme"), ("token-globex", "globex")]),
    };
    let handler = DualHttp::builder(server)
        .prefix("/resources")
        .authorize(hook)
        .build();

    for authorization in [
        Some("Bearer token-acme"),
        Some("Bearer token-globex"),
        Some("Bearer forged"),
        None,
    ] {
        let mut request = http::Request::get(format!("/resources/{}", acme.id));
        if let Some(value) = authorization {
            request = request.header(http::header::AUTHORIZATION, value);
        }
        let response = handler.call(request.body(Empty::<Bytes>::new())?).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        let body: Value = serde_json::from_slice(&body)?;
        let shown = if status.is_success() {
            json!({"name": body["name"], "total_count": body["total_count"]})
        } else {
            body
        };
        println!(
            "{:<28} → {status} {shown}",
            authorization.unwrap_or("(no Authorization)")
        );
    }
    Ok(())
}
