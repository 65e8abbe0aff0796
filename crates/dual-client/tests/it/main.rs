//! Integration tests of dual-client: fixture parsing, every operation against an in-test server that
//! speaks the REST contract, misbehaving servers, parallel
//! range downloads, HTTPS, and pending resources against a real server. One test binary keeps linking cheap.

mod download;
mod https;
mod misbehaving;
mod operations;
mod parallel;
mod parse;
mod pending;
mod support;
