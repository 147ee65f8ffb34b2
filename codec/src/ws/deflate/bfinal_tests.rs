//! Messages whose DEFLATE data ends a stream (a block with BFINAL set) and goes on
//! (issue 37): RFC 7692 §7.2.3.3 lets a sender flush with BFINAL blocks, so a message
//! may hold a final block followed by more blocks, a new stream over the same window.
//! The inflater must deliver all of it, with and without context takeover, or fail;
//! never part of it as if it were whole. The streams are built here with zlib-rs's
//! deflate (`Z_FINISH`, then a fresh stream, primed with the window when the sender
//! keeps its context), as such a sender would.

use core::mem::MaybeUninit;
use std::vec;
use std::vec::Vec;

use libz_rs_sys::{Z_FINISH, Z_SYNC_FLUSH};

use super::zstream::ZDeflate;
use super::{Inflater, TAIL};
use crate::ws::Error;

/// Compress `input` with `flush` and return every byte deflate made.
fn deflate(z: &mut ZDeflate, input: &[u8], flush: core::ffi::c_int) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = input;
    loop {
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let step = z.compress(rest, &mut buf, flush);
        assert!(step.ok(), "deflate: {}", step.code);
        // SAFETY: deflate initialized the first `made` bytes.
        out.extend(buf[..step.made].iter().map(|b| unsafe { b.assume_init() }));
        rest = &rest[step.used..];
        if step.ended() || (rest.is_empty() && step.made < buf.len() && flush != Z_FINISH) {
            return out;
        }
    }
}

/// A payload as RFC 7692 §7.2.1 sends it: its sync flush's empty stored block removed.
fn strip_tail(mut wire: Vec<u8>) -> Vec<u8> {
    assert!(wire.ends_with(&TAIL), "a sync flush ends with the tail");
    wire.truncate(wire.len() - TAIL.len());
    wire
}

/// Text that compresses and refers back: order-book lines.
fn lines(from: usize, n: usize) -> Vec<u8> {
    (from..from + n)
        .flat_map(|i| {
            std::format!(
                "{{\"px\":\"{}.{}\",\"qty\":{}}}\n",
                100 + i % 7,
                i % 10,
                i % 13
            )
            .into_bytes()
        })
        .collect()
}

fn inflate(inf: &mut Inflater, payload: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    inf.inflate(payload, &mut out, 1 << 22)?;
    Ok(out)
}

/// One message: `a` ended with `Z_FINISH` (BFINAL), then `b` in a fresh stream
/// (primed with `a` when `keep`, the sender's context), sync-flushed, tail removed.
/// Returns the payload and the second stream, which the sender goes on with.
fn final_then_more(a: &[u8], b: &[u8], keep: bool) -> (Vec<u8>, ZDeflate) {
    let mut z = ZDeflate::new(6, 15);
    let mut wire = deflate(&mut z, a, Z_FINISH);
    let mut z2 = ZDeflate::new(6, 15);
    if keep {
        assert!(z2.set_dictionary(a));
    }
    wire.extend(strip_tail(deflate(&mut z2, b, Z_SYNC_FLUSH)));
    (wire, z2)
}

#[test]
fn a_final_block_followed_by_a_fresh_stream_is_inflated_whole() {
    let (a, b) = (lines(0, 200), lines(200, 200));
    for (keep, no_context_takeover) in [(false, true), (false, false), (true, false)] {
        let (wire, _) = final_then_more(&a, &b, keep);
        let mut inf = Inflater::new(15, no_context_takeover);
        let got = inflate(&mut inf, &wire).unwrap();
        assert_eq!(got.len(), a.len() + b.len(), "keep {keep}: truncated");
        assert_eq!(got, [a.clone(), b.clone()].concat());
    }
}

/// The part after the final block refers back into the part before it: the window
/// must survive the restart.
#[test]
fn the_window_survives_a_final_block_inside_a_message() {
    let a = lines(0, 300);
    // `b` repeats `a`: with the sender's context it is nearly all back-references.
    let (wire, _) = final_then_more(&a, &a, true);
    assert!(
        wire.len() < a.len() / 2,
        "the second part refers back ({} bytes)",
        wire.len()
    );
    let got = inflate(&mut Inflater::new(15, false), &wire).unwrap();
    assert_eq!(got, [a.clone(), a.clone()].concat());
}

/// Sync-flushed blocks, a final block, then more sync-flushed blocks in one message;
/// then, with context takeover, the next message continues the second stream and
/// refers back across the final block into the first message's start.
#[test]
fn sync_flushes_and_final_blocks_mixed_across_messages_with_context_takeover() {
    let (a, b, c) = (lines(0, 100), lines(100, 100), lines(200, 100));
    let mut z = ZDeflate::new(6, 15);
    let mut wire = deflate(&mut z, &a, Z_SYNC_FLUSH);
    wire.extend(deflate(&mut z, &b, Z_FINISH));
    let mut z2 = ZDeflate::new(6, 15);
    let ab = [a.clone(), b.clone()].concat();
    assert!(z2.set_dictionary(&ab));
    wire.extend(strip_tail(deflate(&mut z2, &c, Z_SYNC_FLUSH)));

    let mut inf = Inflater::new(15, false);
    assert_eq!(
        inflate(&mut inf, &wire).unwrap(),
        [ab.clone(), c.clone()].concat()
    );
    // The next message: `a` again from the second stream, all back-references.
    let next = strip_tail(deflate(&mut z2, &a, Z_SYNC_FLUSH));
    assert!(next.len() < a.len() / 4);
    assert_eq!(inflate(&mut inf, &next).unwrap(), a);
}

/// A message that ends exactly with its final block (no empty block after it), then
/// a short message, then one that refers back past the short one into the first:
/// the window the inflater keeps across messages is the whole window, not only the
/// last message's bytes.
#[test]
fn a_message_ending_in_a_final_block_keeps_the_whole_window() {
    let (a, short) = (lines(0, 200), b"tick".to_vec());
    let mut inf = Inflater::new(15, false);
    // Message 1: `a`, sync-flushed (the usual way).
    let mut z = ZDeflate::new(6, 15);
    let m1 = strip_tail(deflate(&mut z, &a, Z_SYNC_FLUSH));
    assert_eq!(inflate(&mut inf, &m1).unwrap(), a);
    // Message 2: `short`, ended with a final block and nothing after it.
    let m2 = deflate(&mut z, &short, Z_FINISH);
    assert_eq!(inflate(&mut inf, &m2).unwrap(), short);
    // Message 3: a fresh stream primed with everything so far, repeating `a`.
    let mut z3 = ZDeflate::new(6, 15);
    assert!(z3.set_dictionary(&[a.clone(), short.clone()].concat()));
    let m3 = strip_tail(deflate(&mut z3, &a, Z_SYNC_FLUSH));
    assert!(m3.len() < a.len() / 4);
    assert_eq!(inflate(&mut inf, &m3).unwrap(), a);
}

/// Without context takeover a fresh stream after the final block may still refer
/// into the same message before it; nothing carries over to the next message.
#[test]
fn final_blocks_without_context_takeover() {
    let a = lines(0, 150);
    let (wire, _) = final_then_more(&a, &a, true);
    let mut inf = Inflater::new(15, true);
    assert_eq!(
        inflate(&mut inf, &wire).unwrap(),
        [a.clone(), a.clone()].concat()
    );
    // A message of its own: a fresh stream, no window from the one before.
    let mut z = ZDeflate::new(6, 15);
    let m = strip_tail(deflate(&mut z, &a, Z_SYNC_FLUSH));
    assert_eq!(inflate(&mut inf, &m).unwrap(), a);
    // A reference back into the previous message is invalid.
    let mut z = ZDeflate::new(6, 15);
    assert!(z.set_dictionary(&a));
    let m = strip_tail(deflate(&mut z, &a, Z_SYNC_FLUSH));
    assert_eq!(inflate(&mut inf, &m), Err(Error::InvalidCompressedData));
}

/// Several final blocks in a row, each with a little after it, and corrupt data
/// after a final block: an error, never the part before it.
#[test]
fn many_final_blocks_and_garbage_after_one() {
    let parts: Vec<Vec<u8>> = (0..5).map(|i| lines(i * 40, 40)).collect();
    let mut wire = Vec::new();
    let mut seen = Vec::new();
    for p in &parts {
        let mut z = ZDeflate::new(1, 15);
        if !seen.is_empty() {
            assert!(z.set_dictionary(&seen[seen.len().saturating_sub(1 << 15)..]));
        }
        wire.extend(deflate(&mut z, p, Z_FINISH));
        seen.extend_from_slice(p);
    }
    let mut inf = Inflater::new(15, false);
    assert_eq!(inflate(&mut inf, &wire).unwrap(), seen);

    let mut z = ZDeflate::new(6, 15);
    let mut bad = deflate(&mut z, &parts[0], Z_FINISH);
    bad.extend_from_slice(&[0xff, 0xff, 0xff]); // BTYPE 11: reserved
    let mut inf = Inflater::new(15, false);
    assert_eq!(inflate(&mut inf, &bad), Err(Error::InvalidCompressedData));
    // The stream was reset: the inflater is usable again.
    let mut z = ZDeflate::new(6, 15);
    let ok = strip_tail(deflate(&mut z, &parts[1], Z_SYNC_FLUSH));
    assert_eq!(inflate(&mut inf, &ok).unwrap(), parts[1]);
}

/// Into a caller's slice, and at the message limit: the limit counts every part.
#[test]
fn the_limit_counts_what_follows_a_final_block() {
    let (a, b) = (lines(0, 100), lines(100, 100));
    let (wire, _) = final_then_more(&a, &b, true);
    let total = a.len() + b.len();
    let mut out = vec![0u8; total];
    let n = Inflater::new(15, false)
        .inflate_into(&wire, &mut out)
        .unwrap();
    assert_eq!(n, total);
    assert_eq!(out, [a.clone(), b.clone()].concat());
    let mut short = vec![0u8; a.len() + 10];
    assert_eq!(
        Inflater::new(15, false).inflate_into(&wire, &mut short),
        Err(Error::MessageTooLarge)
    );
    let mut out = Vec::new();
    assert_eq!(
        Inflater::new(15, false).inflate(&wire, &mut out, a.len() + 10),
        Err(Error::MessageTooLarge)
    );
}
