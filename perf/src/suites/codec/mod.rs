//! Suite "codec": the WebSocket codec in memory, tickwire against peers.
//!
//! Scenarios (every library gets the same inputs, built once):
//! - parse: B frames back to back (128-byte text or binary payloads), read
//!   one message at a time ([`parse`]);
//! - apply_mask on 128-byte payloads ([`mask`]);
//! - encode a 128-byte text message, server and client role ([`encode`]);
//! - UTF-8 validation of 128 bytes ([`utf8`]).

mod encode;
mod mask;
mod parse;
mod utf8;

use super::Case;
use crate::inputs::{OP_BINARY, OP_TEXT, SplitMix64, frames, header_len, quote_text};

/// Payload size of every scenario in this suite.
pub const PAYLOAD: usize = 128;

/// Scenario names.
pub mod names {
    /// Parse unmasked text frames as a client.
    pub const PARSE_TEXT: &str = "ws parse text 128B unmasked (client role)";
    /// Parse masked text frames as a server.
    pub const PARSE_MASKED: &str = "ws parse text 128B masked (server role)";
    /// Parse unmasked binary frames as a client.
    pub const PARSE_BINARY: &str = "ws parse binary 128B unmasked (client role)";
    /// XOR-mask a payload.
    pub const MASK: &str = "apply_mask 128B";
    /// Encode an unmasked text frame.
    pub const ENCODE_SERVER: &str = "ws encode text 128B server";
    /// Encode a masked text frame with a fresh key.
    pub const ENCODE_CLIENT: &str = "ws encode text 128B client (masked, fresh key)";
    /// Validate UTF-8.
    pub const UTF8: &str = "utf8 validate 128B";
}

/// The inputs of one run, for a batch of `batch` operations.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// Operations per batch; every input holds this many items.
    pub batch: usize,
    /// JSON-ish ASCII trade ticks, `PAYLOAD` bytes each.
    pub texts: Vec<String>,
    /// The same texts with a `'static` lifetime (for peers that want `Bytes::from_static`).
    pub static_texts: Vec<&'static str>,
    /// Random binary payloads, `PAYLOAD` bytes each (not valid UTF-8).
    pub binaries: Vec<Vec<u8>>,
    /// A masking key per frame.
    pub keys: Vec<[u8; 4]>,
    /// `texts` as unmasked text frames (server to client).
    pub text_unmasked: Vec<u8>,
    /// `texts` as masked text frames (client to server), key `keys[i]`.
    pub text_masked: Vec<u8>,
    /// `binaries` as unmasked binary frames.
    pub binary_unmasked: Vec<u8>,
}

impl Inputs {
    /// Build everything for batches of `batch` operations.
    pub fn new(batch: usize) -> Self {
        let mut rng = SplitMix64::new(0x7431_636b_7769_7265);
        let texts: Vec<String> = (0..batch).map(|_| quote_text(PAYLOAD, &mut rng)).collect();
        let binaries: Vec<Vec<u8>> = (0..batch)
            .map(|_| {
                let mut b: Vec<u8> = (0..PAYLOAD).map(|_| rng.next_u64() as u8).collect();
                b[0] = 0xFF; // never valid UTF-8
                b
            })
            .collect();
        let keys: Vec<[u8; 4]> = (0..batch).map(|_| rng.key()).collect();
        // Leaked once per process: a handful of KiB.
        let static_texts = texts
            .iter()
            .map(|t| &*Box::leak(t.clone().into_boxed_str()))
            .collect();
        Inputs {
            batch,
            text_unmasked: frames(OP_TEXT, &texts, None),
            text_masked: frames(OP_TEXT, &texts, Some(&keys)),
            binary_unmasked: frames(OP_BINARY, &binaries, None),
            texts,
            static_texts,
            binaries,
            keys,
        }
    }

    /// Offset of payload `i` in [`text_masked`](Self::text_masked).
    pub fn masked_payload_offset(&self, i: usize) -> usize {
        let h = header_len(PAYLOAD, true);
        i * (h + PAYLOAD) + h
    }

    /// Bytes a batch of encoded frames can take (largest header per frame).
    pub fn encode_capacity(&self) -> usize {
        self.batch * (PAYLOAD + 14)
    }
}

/// Every row of the suite, in report order; tickwire's row comes first in
/// each scenario and is its baseline.
pub fn cases(inputs: &Inputs) -> Vec<Case<'_>> {
    let mut v = Vec::new();
    parse::cases(inputs, &mut v);
    mask::cases(inputs, &mut v);
    encode::cases(inputs, &mut v);
    utf8::cases(inputs, &mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::RunConfig;
    use std::time::Duration;

    /// Every case verifies its library's output before measuring; run them
    /// all briefly so a broken input or decoder fails here.
    #[test]
    fn every_case_verifies_and_measures() {
        let inputs = Inputs::new(8);
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(1),
            max_samples: 256,
        };
        for case in cases(&inputs) {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
