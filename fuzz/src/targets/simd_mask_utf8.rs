//! The SIMD paths against the scalar ones, whole and streamed. First byte: mode and phase;
//! next 4: masking key; next: split points; the rest is the payload.
//!
//! - Masking: `apply_mask` (dispatched), the scalar path and each SIMD path the CPU has
//!   agree with a byte-by-byte reference for every phase; masking in pieces with the
//!   phase carried gives the same bytes as masking at once; `copy_masked` agrees with
//!   `apply_mask`; masking twice restores the input.
//! - UTF-8: `is_valid`/`to_str` agree with `core::str::from_utf8`; `validate_prefix`
//!   agrees with the standard library's `valid_up_to`/`error_len`; validating a stream
//!   piece by piece the way the frame reader does gives the whole-buffer verdict.
use tickwire_codec::simd::{cpu, mask, utf8};

/// One input of the fuzz target `simd_mask_utf8` (see the module docs).
pub fn run(input: &[u8]) {
    let Some((head, data)) = input.split_at_checked(7) else {
        return;
    };
    let phase = usize::from(head[0] >> 1);
    let key = [head[1], head[2], head[3], head[4]];
    let cuts = [usize::from(head[5]), usize::from(head[6])];
    if head[0] & 1 == 0 {
        masking(data, key, phase, cuts);
    } else {
        utf8_paths(data, cuts);
    }
}

fn masking(data: &[u8], key: [u8; 4], phase: usize, cuts: [usize; 2]) {
    let reference: Vec<u8> = data
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ key[(phase + i) % 4])
        .collect();

    let mut dispatched = data.to_vec();
    mask::apply_mask(&mut dispatched, key, phase);
    assert_eq!(dispatched, reference, "apply_mask");

    let mut scalar = data.to_vec();
    mask::apply_mask_scalar(&mut scalar, key, phase);
    assert_eq!(scalar, reference, "apply_mask_scalar");

    let mut copied = vec![0u8; data.len()];
    mask::copy_masked(&mut copied, data, key, phase);
    assert_eq!(copied, reference, "copy_masked");
    mask::copy_masked_scalar(&mut copied, data, key, phase);
    assert_eq!(copied, reference, "copy_masked_scalar");

    #[cfg(target_arch = "x86_64")]
    {
        let f = cpu::features();
        if f.sse2 {
            let mut b = data.to_vec();
            // SAFETY: the CPU has SSE2 (checked just above).
            unsafe { mask::apply_mask_sse2(&mut b, key, phase) };
            assert_eq!(b, reference, "apply_mask_sse2");
            // SAFETY: as above.
            unsafe { mask::copy_masked_sse2(&mut b, data, key, phase) };
            assert_eq!(b, reference, "copy_masked_sse2");
        }
        if f.avx2 {
            let mut b = data.to_vec();
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { mask::apply_mask_avx2(&mut b, key, phase) };
            assert_eq!(b, reference, "apply_mask_avx2");
            // SAFETY: as above.
            unsafe { mask::copy_masked_avx2(&mut b, data, key, phase) };
            assert_eq!(b, reference, "copy_masked_avx2");
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = cpu::features();

    // Streamed: pieces at the cut points, phase carried.
    let mut streamed = data.to_vec();
    let mut at = 0usize;
    for cut in cuts.into_iter().chain([usize::MAX]) {
        let end = at.saturating_add(cut).min(streamed.len());
        mask::apply_mask(&mut streamed[at..end], key, phase + at);
        at = end;
    }
    assert_eq!(streamed, reference, "streamed masking");

    mask::apply_mask(&mut streamed, key, phase);
    assert_eq!(streamed, data, "masking twice");
}

fn utf8_paths(data: &[u8], cuts: [usize; 2]) {
    let std = core::str::from_utf8(data);
    assert_eq!(utf8::is_valid(data), std.is_ok());
    assert_eq!(utf8::to_str(data), std.ok());
    match (utf8::validate_prefix(data), std) {
        (Ok(n), Ok(_)) => assert_eq!(n, data.len()),
        (Ok(n), Err(e)) => {
            assert!(e.error_len().is_none(), "accepted a certain error");
            assert_eq!(n, e.valid_up_to());
        }
        (Err(_), Ok(_)) => panic!("rejected valid UTF-8"),
        (Err(_), Err(e)) => assert!(e.error_len().is_some(), "rejected an unfinished char"),
    }

    // The frame reader's streaming check: bytes arrive in pieces; `valid` counts the
    // leading bytes known good and is re-validated from there as more arrive.
    let mut valid = 0;
    let mut end = 0usize;
    let mut failed = false;
    for cut in cuts.into_iter().chain([usize::MAX]) {
        end = end.saturating_add(cut.max(1)).min(data.len());
        match utf8::validate_prefix(&data[valid..end]) {
            Ok(n) => valid += n,
            Err(_) => {
                failed = true;
                break;
            }
        }
        if end == data.len() {
            break;
        }
    }
    let streamed_ok = !failed && valid == data.len();
    assert_eq!(streamed_ok, std.is_ok(), "streamed verdict differs");
    if failed {
        // Failing early is only allowed where the input is certainly invalid.
        assert!(std.is_err_and(|e| e.error_len().is_some()));
    }
}
