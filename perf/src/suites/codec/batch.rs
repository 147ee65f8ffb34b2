//! Batch throughput: 100 unmasked text frames of mixed sizes (32 to 224
//! bytes, 128 on average: a market-data burst) back to back in one buffer,
//! parsed one message at a time; a sample is the whole burst, reported per
//! message. Same runners and fairness rules as [`parse`](super::parse): the
//! copy of the burst into each library's buffer is inside the timed region.

use super::names::BATCH;
use super::nexus;
use super::parse::{self, NOTE_FWS, NOTE_TUNG, NOTE_TW, Spec};
use crate::inputs::{OP_TEXT, SplitMix64, frames, quote_text};
use crate::suites::Case;
use tickwire_codec::ws::Role;

/// Frames per burst.
pub const FRAMES: usize = 100;

/// The burst: payload sizes cycle deterministically through 32..=224.
fn burst() -> (Vec<u8>, Vec<String>) {
    let mut rng = SplitMix64::new(0xba7c_4100);
    let texts: Vec<String> = (0..FRAMES)
        .map(|_| {
            let len = 32 + (rng.next_u64() % 193) as usize;
            quote_text(len, &mut rng)
        })
        .collect();
    (frames(OP_TEXT, &texts, None), texts)
}

pub(super) fn cases<'a>(v: &mut Vec<Case<'a>>) {
    let (wire, texts) = burst();
    let wire: &'static [u8] = wire.leak();
    let expect: &'static [&'static [u8]] = texts
        .into_iter()
        .map(|t| String::leak(t).as_bytes())
        .collect::<Vec<_>>()
        .leak();
    let spec = Spec {
        role: Role::Client,
        wire,
        expect,
        text: true,
    };
    v.push(Case::new(BATCH, "tickwire", true, NOTE_TW, move |cfg| {
        parse::tickwire(cfg, spec, true)
    }));
    v.push(Case::new(
        BATCH,
        "tungstenite 0.30",
        false,
        NOTE_TUNG,
        move |cfg| parse::tungstenite(cfg, spec),
    ));
    v.push(Case::new(
        BATCH,
        "fastwebsockets 0.10",
        false,
        NOTE_FWS,
        move |cfg| parse::fastwebsockets(cfg, spec),
    ));
    v.push(Case::new(
        BATCH,
        nexus::LIB,
        false,
        nexus::NOTE_PARSE,
        move |cfg| nexus::parse(cfg, spec),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_has_mixed_sizes_averaging_near_128() {
        let (wire, texts) = burst();
        assert_eq!(texts.len(), FRAMES);
        let total: usize = texts.iter().map(String::len).sum();
        assert!((100 * FRAMES..=160 * FRAMES).contains(&total), "{total}");
        assert!(texts.iter().any(|t| t.len() < 64) && texts.iter().any(|t| t.len() > 192));
        assert!(wire.len() > total);
    }
}
