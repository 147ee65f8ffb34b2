//! What a test does when a peer is missing, and the byte pattern peers serve.

use std::fmt;
use std::io::Write;

/// Why a peer server could not be had.
#[derive(Debug)]
pub enum PeerError {
    /// The peer is not installed (binary or venv missing): the message says how to install it.
    Absent(String),
    /// The peer is installed but did not start or did not accept connections in time.
    Failed(String),
}

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerError::Absent(m) => write!(f, "peer absent: {m}"),
            PeerError::Failed(m) => write!(f, "peer failed: {m}"),
        }
    }
}

impl std::error::Error for PeerError {}

/// Whether `TICKWIRE_REQUIRE_PEERS` is set (to anything but empty or `0`): then a missing
/// peer fails the test instead of skipping it.
pub fn peers_required() -> bool {
    std::env::var_os("TICKWIRE_REQUIRE_PEERS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The peer, or `None` after a loud skip message when it is absent and peers are not
/// required. Panics (fails the test) when the peer failed to start, or is absent while
/// `TICKWIRE_REQUIRE_PEERS` is set.
pub fn skip_or_fail<T>(test: &str, peer: Result<T, PeerError>) -> Option<T> {
    match peer {
        Ok(p) => Some(p),
        Err(PeerError::Absent(m)) if !peers_required() => {
            // Straight to the stderr handle: the test harness captures `eprintln!`, and a
            // skip must be seen.
            let _ = writeln!(
                std::io::stderr(),
                "\n!!!! SKIPPED {test}: {m}\n!!!! (set TICKWIRE_REQUIRE_PEERS=1 to make this a failure)\n"
            );
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

/// The deterministic bytes the harness serves in its static files: byte `i` of any
/// pattern file is `pattern(i)`, so tests can check any range of a large body.
pub fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 11)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_peer_is_skipped_only_when_not_required() {
        // The test process may run with TICKWIRE_REQUIRE_PEERS set (CI): check both ways
        // by the function's contract rather than by mutating the environment.
        let r = std::panic::catch_unwind(|| {
            skip_or_fail::<()>("t", Err(PeerError::Absent("x".into())))
        });
        if peers_required() {
            assert!(r.is_err());
        } else {
            assert_eq!(r.ok(), Some(None));
        }
        let failed = std::panic::catch_unwind(|| {
            skip_or_fail::<()>("t", Err(PeerError::Failed("x".into())))
        });
        assert!(failed.is_err());
        assert_eq!(skip_or_fail("t", Ok::<u8, PeerError>(7)), Some(7));
    }

    #[test]
    fn pattern_is_not_periodic_in_small_ranges() {
        let a: Vec<u8> = (0..256).map(pattern).collect();
        let b: Vec<u8> = (2048..2048 + 256).map(pattern).collect();
        assert_ne!(a, b);
    }
}
