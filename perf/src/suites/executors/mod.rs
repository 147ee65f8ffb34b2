//! Suite "executors" (issue 36): the same WebSocket client on three executors, side by
//! side with nexus-async-net on tokio. tickwire's tokio adapter (the baseline, the
//! tokio loopback suite's row), its futures-io driver on smol (async-io's reactor,
//! `smol::block_on` on the measuring thread) and on nexus-async-rt (its own mio
//! reactor, its `block_on`), and nexus-async-net 0.7.1's tokio `WsStream`, each on a
//! `current_thread`-style single thread.
//!
//! - Round trip, 40 B binary: the client sends and awaits the echo from a server on
//!   the other core: tickwire's rows all against the same `tokio::ws` echo (the tokio
//!   loopback suite's), nexus-async-net against its own echo. The raw-TCP rows are the
//!   floor of each executor: the same 46 bytes out (a masked 40 B frame) and 42 bytes
//!   back (the unmasked echo) through the executor's TCP stream, no codec, against a
//!   raw echo on tokio.
//! - Receive stream, 128 B binary: the loopback suite's sender (pre-encoded masked
//!   frames, ~64 KiB per write, after a real opening handshake) on the other core; the
//!   server connection under test receives [`PER_SAMPLE`] messages per sample, each
//!   unmasked and checked. The floor is the loopback suite's raw reader.
//!
//! Under `--instructions` the counts are every user-space instruction of the client
//! thread and (round trip) of the echo thread per message, runtimes included: the echo
//! follows the counted batches ([`Follower`](crate::callgrind::Follower)). There each
//! side of a round trip waits 2 ms before it writes ([`pace`]), so every row counts the
//! same pattern: the other side parked when the bytes arrive.
//!
//! [`PER_SAMPLE`]: crate::suites::loopback::stream::PER_SAMPLE

mod nexus_net;
mod rtt;
mod stream;

/// How long each side of a round trip waits before it writes, under callgrind.
const PACE: std::time::Duration = std::time::Duration::from_millis(2);

/// Under callgrind (`--instructions`), wait [`PACE`] before a round trip's write, so
/// the side it goes to is always parked in its runtime when the bytes arrive (a feed
/// with gaps, a remote peer): callgrind runs one thread at a time, and without this the
/// thread it ran after each system call decided whether a read found the other side's
/// bytes already there; a row moved by up to 30% from run to run (nexus-async-rt's
/// round trip between 3.3k and 5.3k, below its raw-TCP floor in some runs). Every
/// round-trip row of the suite, floors included, waits the same way on both sides (a
/// few tens of instructions of `nanosleep` each, the same in every row). Nothing in
/// the timed runs.
pub(crate) fn pace(on: bool) {
    if on {
        std::thread::sleep(PACE);
    }
}

/// Whether this run's round trips are paced (see [`pace`]).
pub(crate) fn paced() -> bool {
    crate::callgrind::running_on_valgrind()
}

#[path = "../../../../transport/tests/nexus_util/mod.rs"]
pub(crate) mod nexus_util;

use super::loopback::peer_core;
use super::{Case, Setup};

/// Register the suite's rows.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    let peer = peer_core(setup);
    rtt::cases(peer, v);
    stream::cases(peer, v);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::RunConfig;
    use std::time::Duration;

    /// Every row verifies its messages and measures briefly.
    #[test]
    fn every_case_verifies_and_measures() {
        let mut v = Vec::new();
        let setup = Setup {
            batch: 8,
            core: 0,
            peer_core: None,
        };
        register(&setup, &mut v);
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(5),
            max_samples: 16,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
