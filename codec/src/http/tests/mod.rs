//! Tests of the HTTP codec that span several modules: whole responses and
//! requests, hostile inputs, and write-then-parse round trips.

mod response;
