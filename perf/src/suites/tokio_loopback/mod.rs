//! Suite "tokio loopback" (issue 9): WebSocket round trip over 127.0.0.1 through
//! tokio, tickwire's tokio adapter against tokio-tungstenite and fastwebsockets, plain
//! TCP and TLS 1.3, each side on a `current_thread` runtime, the echo server (same
//! library) on a second pinned core. 40 B binary and a 77 B JSON tick (text), the sizes of issue 9.
//!
//! Each scenario also has the blocking tickwire row: the blocking client against the
//! same echo server as the tokio row (the adapter's), so the ratio column compares
//! the async client to the blocking one in the same run (the issue asks for the
//! async path within 10% of it). System calls per hop (strace): the blocking client
//! sends and then sleeps in its socket's blocking read (send, recv); a tokio client
//! sends, sleeps in the reactor's `epoll_wait`, then reads (send, epoll_wait, recv),
//! as tokio-tungstenite and fastwebsockets do and as the tokio echo does for every row.
//!
//! - [`tickwire`]: `tickwire::tokio::ws` (ws:// and wss://) and the blocking rows.
//! - [`peer`]: tokio-tungstenite and fastwebsockets over tokio's TcpStream, or over
//!   tokio-rustls with the same rustls configs (ring, TLS 1.3 only) as tickwire's
//!   wss:// rows.
//!
//! A tokio sample is one round trip (send, then await the echo) awaited inside one
//! `block_on` that runs the whole measurement ([`bench_batch_async`]), as an
//! application's task awaits its messages: the runtime's park, reactor and wake-up
//! are in every round trip, entering the runtime is not. All tokio rows are driven
//! the same way, so their difference is the library.
//!
//! Unlike the other loopback suites these rows also run under `--instructions`: the
//! count is every user-space instruction of both threads per round trip (client and
//! echo, runtimes included), the same from run to run; time spent waiting in the
//! kernel is not in it (the timed rows have that). Callgrind's collection switch is
//! per thread, so each echo loop follows the client's counted batches with a
//! [`Follower`](crate::callgrind::Follower) (one echo cycle per counted round trip).
//!
//! [`bench_batch_async`]: crate::harness::bench_batch_async

mod peer;
pub(crate) mod tickwire;

use tokio::runtime::{Builder, Runtime};

use super::loopback::peer_core;
use super::{Case, Setup};
use crate::harness::RunConfig;
use crate::machine;

/// A 77-byte JSON market-data tick.
const TICK: &str =
    r#"{"s":"BTCUSDT","b":"64123.10","bq":"0.512","a":"64123.20","aq":"1.004","t":7}"#;
const _: () = assert!(TICK.len() == 77);

/// The scenario name: plain or TLS, binary or text.
fn scenario(tls: bool, text: bool) -> String {
    let net = if tls { "TLS round trip" } else { "round trip" };
    let what = if text { "77B JSON text" } else { "40B binary" };
    format!("tokio loopback {net} {what}")
}

/// Register the suite's rows.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    let peer = peer_core(setup);
    for tls in [false, true] {
        for text in [false, true] {
            let s = scenario(tls, text);
            tickwire::cases(&s, peer, tls, text, v);
            peer::case::<peer::TokioTungstenite>(&s, peer, tls, text, v);
            peer::case::<peer::FastWebSockets>(&s, peer, tls, text, v);
            tickwire::blocking_case(&s, peer, tls, text, v);
        }
    }
}

pub(crate) fn runtime() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Run `f` on a thread pinned to `core`, with its own `current_thread` runtime.
pub(crate) fn spawn_echo<F: Future<Output = ()> + 'static>(
    core: usize,
    f: impl FnOnce() -> F + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("bench-peer".into())
        .spawn(move || {
            machine::pin(core);
            runtime().block_on(f())
        })
        .expect("spawn the peer thread")
}

pub(crate) fn payload(text: bool) -> Vec<u8> {
    if text {
        TICK.as_bytes().to_vec()
    } else {
        (0..40u8).map(|i| i.wrapping_mul(37)).collect()
    }
}

/// One round per sample.
pub(crate) fn one(cfg: &RunConfig) -> RunConfig {
    RunConfig { batch: 1, ..*cfg }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Every row verifies its echo (and TLS 1.3 on the TLS rows) and measures briefly.
    #[test]
    fn every_case_verifies_and_measures() {
        let mut v = Vec::new();
        let setup = Setup {
            batch: 8,
            core: 0,
            peer_core: None,
        };
        register(&setup, &mut v);
        assert_eq!(v.len(), 16);
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(5),
            max_samples: 64,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
