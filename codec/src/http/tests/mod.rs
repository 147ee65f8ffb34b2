//! Tests of the HTTP codec that span several modules: whole responses and
//! requests, hostile inputs, and write-then-parse round trips.

mod hostile;
mod no_panic;
mod request;
mod response;
mod roundtrip;
