//! The fuzz targets' bodies: each `run` checks one input against the target's invariants
//! (panics on a violation). The cargo-fuzz binaries in `fuzz_targets/` call them, and so
//! does the seed replay test (`cargo test --lib` here), on stable.

pub mod http_chunked;
pub mod http_request_reader;
pub mod http_request_writer;
pub mod http_response_reader;
pub mod simd_mask_utf8;
pub mod tls_codec;
pub mod tls_records;
pub mod ws_deflate;
pub mod ws_diff_tungstenite;
pub mod ws_frame_reader;
pub mod ws_handshake_client;
pub mod ws_handshake_server;

/// A fuzz target's body: one input through the target's invariants.
pub type Target = fn(&[u8]);

/// Every target by name, as its seed directory under `fuzz/seeds/` is named.
pub const ALL: &[(&str, Target)] = &[
    ("http_chunked", http_chunked::run),
    ("http_request_reader", http_request_reader::run),
    ("http_request_writer", http_request_writer::run),
    ("http_response_reader", http_response_reader::run),
    ("simd_mask_utf8", simd_mask_utf8::run),
    ("tls_codec", tls_codec::run),
    ("tls_records", tls_records::run),
    ("ws_deflate", ws_deflate::run),
    ("ws_diff_tungstenite", ws_diff_tungstenite::run),
    ("ws_frame_reader", ws_frame_reader::run),
    ("ws_handshake_client", ws_handshake_client::run),
    ("ws_handshake_server", ws_handshake_server::run),
];
