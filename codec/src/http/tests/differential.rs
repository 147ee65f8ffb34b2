//! What the two head differential tests (`head_differential` for responses,
//! `request_differential` for requests) share: the paths of our parser, the
//! walk over prefixes, and the input strategies.

use core::fmt::Debug;
use proptest::prelude::*;
use std::vec::Vec;

/// The ways our parser can take: as dispatched, and each path on its own.
#[derive(Debug, Clone, Copy)]
pub(super) enum Path {
    Dispatched,
    Bytewise,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

pub(super) const PATHS: &[Path] = &[
    Path::Dispatched,
    Path::Bytewise,
    #[cfg(target_arch = "x86_64")]
    Path::Sse2,
    #[cfg(target_arch = "x86_64")]
    Path::Avx2,
];

/// `ours` (on every path) and `theirs` agree on `data` and on every prefix
/// of it (a few under Miri), with room for 3 headers (so TooManyHeaders is
/// reachable: `small`) and for 16.
pub(super) fn agree<O: PartialEq + Debug>(
    data: &[u8],
    ours: impl Fn(&[u8], Path, bool) -> O,
    theirs: impl Fn(&[u8], bool) -> O,
) {
    // Under Miri (which runs the block paths too, at interpreter speed) the
    // whole input and a few cuts, not every prefix.
    let n = data.len();
    let cuts: Vec<usize> = if cfg!(miri) {
        std::vec![0, n / 3, n / 2, n.saturating_sub(1), n]
    } else {
        (0..=n).collect()
    };
    for k in cuts {
        let d = &data[..k];
        for &path in PATHS {
            for small in [true, false] {
                assert_eq!(
                    ours(d, path, small),
                    theirs(d, small),
                    "{path:?} small {small} {}",
                    d.escape_ascii()
                );
            }
        }
    }
}

/// Inputs: `pieces` (and random bytes) concatenated, alone or after one of
/// `starts`; a well-formed head (`first_line`, up to 5 headers, a body)
/// with a few bytes changed; random bytes.
pub(super) fn input(
    pieces: &'static [&'static [u8]],
    starts: &'static [&'static [u8]],
    first_line: &'static [u8],
) -> impl Strategy<Value = Vec<u8>> {
    let piece = || {
        prop_oneof![
            4 => proptest::sample::select(pieces).prop_map(|p| p.to_vec()),
            1 => proptest::collection::vec(any::<u8>(), 1..4),
        ]
    };
    let mutated = (
        0..6usize,
        proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3),
    )
        .prop_map(move |(n, muts)| {
            let mut v = first_line.to_vec();
            for i in 0..n {
                v.extend_from_slice(
                    std::format!("X-Header-{i}: some value number {i}\r\n").as_bytes(),
                );
            }
            // A body long enough for the blocks to reach every line.
            v.extend_from_slice(b"\r\n{\"body\":\"long enough for whole blocks\"}");
            for (at, b) in muts {
                let at = at % v.len();
                v[at] = b;
            }
            v
        });
    prop_oneof![
        3 => proptest::collection::vec(piece(), 0..24).prop_map(|p| p.concat()),
        3 => (
            proptest::sample::select(starts),
            proptest::collection::vec(piece(), 0..24),
        )
            .prop_map(|(start, p)| [start.to_vec(), p.concat(), [b'b'; 32].to_vec()].concat()),
        2 => mutated,
        1 => proptest::collection::vec(any::<u8>(), 0..64),
    ]
}
