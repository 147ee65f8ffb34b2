//! Suite "codec": the WebSocket codec in memory, tickwire against peers.
//!
//! Scenarios (every library gets the same inputs, built once):
//! - parse: B frames back to back, unmasked text and binary (client role)
//!   and masked text (server role) at each of [`SIZES`], read one message
//!   at a time ([`parse`]); text also as mixed multi-byte UTF-8 at each of
//!   [`NON_ASCII_SIZES`];
//! - batch: 100 text frames of mixed sizes back to back, per message ([`batch`]);
//! - apply_mask on 128-byte payloads ([`mask`]);
//! - encode a 128-byte text message, server and client role ([`encode`]);
//! - UTF-8 validation of 128 bytes ([`utf8`]);
//! - permessage-deflate: inflate and deflate of the 128 B and 2 KiB texts
//!   ([`deflate`]), beside the uncompressed parse and encode rows.
//! - floor rows beside the unmasked text parses and the server-role encode
//!   ([`floor`]).

mod batch;
#[cfg(feature = "deflate")]
mod deflate;
mod encode;
mod floor;
mod mask;
mod nexus;
mod parse;
mod utf8;

use super::{Case, Setup};
use crate::inputs::{OP_BINARY, OP_TEXT, SplitMix64, frames, header_len, mixed_text, quote_text};

/// Payload size of the mask, encode and UTF-8 scenarios.
pub const PAYLOAD: usize = 128;

/// Payload sizes of the parse scenarios.
pub const SIZES: [usize; 4] = [32, 128, 512, 2048];

/// Payload sizes of the non-ASCII text parse scenarios ([`Inputs::non_ascii`]).
pub const NON_ASCII_SIZES: [usize; 2] = [128, 2048];

/// Scenario names.
pub mod names {
    /// Parse unmasked text frames of `size` bytes as a client.
    pub fn parse_text(size: usize) -> String {
        format!("ws parse text {size}B unmasked (client role)")
    }
    /// Parse masked text frames of `size` bytes as a server.
    pub fn parse_masked(size: usize) -> String {
        format!("ws parse text {size}B masked (server role)")
    }
    /// Parse unmasked text frames of `size` bytes of mixed multi-byte UTF-8 as a client.
    pub fn parse_text_utf8(size: usize) -> String {
        format!("ws parse text {size}B non-ASCII unmasked (client role)")
    }
    /// Parse masked text frames of `size` bytes of mixed multi-byte UTF-8 as a server.
    pub fn parse_masked_utf8(size: usize) -> String {
        format!("ws parse text {size}B non-ASCII masked (server role)")
    }
    /// Parse unmasked binary frames of `size` bytes as a client.
    pub fn parse_binary(size: usize) -> String {
        format!("ws parse binary {size}B unmasked (client role)")
    }
    /// 100 mixed-size text frames back to back, per message.
    pub const BATCH: &str = "ws batch 100 text frames 32-224B (client role), per message";
    /// XOR-mask a payload.
    pub const MASK: &str = "apply_mask 128B";
    /// Encode an unmasked text frame.
    pub const ENCODE_SERVER: &str = "ws encode text 128B server";
    /// Encode a masked text frame with a fresh key.
    pub const ENCODE_CLIENT: &str = "ws encode text 128B client (masked, fresh key)";
    /// Validate UTF-8.
    pub const UTF8: &str = "utf8 validate 128B";
}

/// The inputs of one run at one payload size, for a batch of `batch` operations.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// Operations per batch; every input holds this many items.
    pub batch: usize,
    /// Payload size in bytes.
    pub payload: usize,
    /// JSON-ish ASCII trade ticks, `payload` bytes each, or with
    /// [`non_ascii`](Self::non_ascii) mixed 1- to 4-byte UTF-8 texts.
    pub texts: Vec<String>,
    /// The texts are mixed multi-byte UTF-8 ([`crate::inputs::mixed_text`]), not ASCII.
    pub non_ascii: bool,
    /// The same texts with a `'static` lifetime (for peers that want `Bytes::from_static`).
    pub static_texts: Vec<&'static str>,
    /// Random binary payloads, `payload` bytes each (not valid UTF-8).
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
    /// Build everything for batches of `batch` operations on [`PAYLOAD`]-byte payloads.
    pub fn new(batch: usize) -> Self {
        Self::sized(batch, PAYLOAD)
    }

    /// Build everything for batches of `batch` operations on `payload`-byte payloads.
    pub fn sized(batch: usize, payload: usize) -> Self {
        Self::build(batch, payload, false)
    }

    /// The same with mixed multi-byte UTF-8 texts instead of ASCII ones.
    pub fn sized_non_ascii(batch: usize, payload: usize) -> Self {
        Self::build(batch, payload, true)
    }

    fn build(batch: usize, payload: usize, non_ascii: bool) -> Self {
        let mut rng = SplitMix64::new(0x7431_636b_7769_7265 ^ payload as u64);
        let text = if non_ascii { mixed_text } else { quote_text };
        let texts: Vec<String> = (0..batch).map(|_| text(payload, &mut rng)).collect();
        let binaries: Vec<Vec<u8>> = (0..batch)
            .map(|_| {
                let mut b: Vec<u8> = (0..payload).map(|_| rng.next_u64() as u8).collect();
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
            payload,
            text_unmasked: frames(OP_TEXT, &texts, None),
            text_masked: frames(OP_TEXT, &texts, Some(&keys)),
            binary_unmasked: frames(OP_BINARY, &binaries, None),
            texts,
            non_ascii,
            static_texts,
            binaries,
            keys,
        }
    }

    /// Offset of payload `i` in [`text_masked`](Self::text_masked).
    pub fn masked_payload_offset(&self, i: usize) -> usize {
        let h = header_len(self.payload, true);
        i * (h + self.payload) + h
    }

    /// Bytes a batch of encoded frames can take (largest header per frame).
    pub fn encode_capacity(&self) -> usize {
        self.batch * (self.payload + 14)
    }
}

/// Register every row of the suite, in report order; tickwire's row comes
/// first in each scenario and is its baseline. Inputs live for the process.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    let sets: &'static [Inputs] = SIZES
        .iter()
        .map(|&n| Inputs::sized(setup.batch, n))
        .chain(
            NON_ASCII_SIZES
                .iter()
                .map(|&n| Inputs::sized_non_ascii(setup.batch, n)),
        )
        .collect::<Vec<_>>()
        .leak();
    v.extend(cases(sets));
}

/// Every row of the suite for inputs at one or more sizes: parse rows at
/// each size; batch, mask, encode and UTF-8 rows on the [`PAYLOAD`]-sized
/// ASCII set (which must be present).
pub fn cases(sets: &[Inputs]) -> Vec<Case<'_>> {
    let mut v = Vec::new();
    for inputs in sets {
        parse::cases(inputs, &mut v);
    }
    let base = sets
        .iter()
        .find(|i| i.payload == PAYLOAD && !i.non_ascii)
        .expect("the 128-byte inputs");
    batch::cases(&mut v);
    mask::cases(base, &mut v);
    encode::cases(base, &mut v);
    utf8::cases(base, &mut v);
    #[cfg(feature = "deflate")]
    for inputs in sets.iter().filter(|i| matches!(i.payload, PAYLOAD | 2048)) {
        deflate::cases(inputs, &mut v);
    }
    floor::cases(sets, base, &mut v);
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
        let inputs = [
            Inputs::sized(8, 32),
            Inputs::new(8),
            Inputs::sized_non_ascii(8, 128),
        ];
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(1),
            max_samples: 256,
            count_rounds: 0,
        };
        for case in cases(&inputs) {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
