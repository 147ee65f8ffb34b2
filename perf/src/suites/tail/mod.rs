//! Suite "tail" (issue 38): one-way latency of a paced feed over loopback, the tail a
//! trading user looks at (p99.9, p99.99, max under bursts), not the median of a closed
//! loop.
//!
//! A sender thread pinned to the second core sends 128 B binary WebSocket client frames
//! (masked, pre-encoded, one `write` each, TCP_NODELAY) on a schedule: exponential gaps
//! (mean [`MEAN_GAP_US`]) and, every [`BURST_EVERY_US`], a burst of [`BURST`] messages
//! due at the same instant (sent back to back). It spins on the TSC until each message is
//! due, then stamps the payload with the TSC (and a sequence number) and writes it. How
//! late each message left against the moment it could have (the later of its due time
//! and the previous write's return) is the sender's *lateness*, recorded beside the row
//! with the time of each write: both are zero-ish unless the machine took the sender's
//! core away. The receiver, on the measuring core, reads the TSC as soon as the library
//! hands it the message: the difference is the one-way latency. Every row sees the same
//! bytes on the same schedule (a fixed seed per round); the floors receive them with
//! plain reads and no parsing, so they measure the kernel and the machine.
//!
//! After the scenario ran, [`verdict`] decides whether the run could judge tails at all
//! ("quiet", by criteria it prints) from the sender's lateness and the floors' spread,
//! and writes `tail.md` and a plot per row (the row, its floor, the sender's lateness).

pub(crate) mod rows;
pub mod verdict;

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use hdrhistogram::Histogram;

use super::loopback::stream::client_handshake;
use super::loopback::{payload, peer_core, spawn_pinned};
use super::{Case, Setup, unexpected};
use crate::clock;
use crate::harness::{Measurement, RunConfig, SCALE};
use crate::inputs::SplitMix64;

/// Payload bytes of every message.
pub const SIZE: usize = 128;
/// Mean of the exponential gaps between messages, in microseconds (50,000 a second).
pub const MEAN_GAP_US: f64 = 20.0;
/// A burst every this many microseconds.
pub const BURST_EVERY_US: f64 = 5_000.0;
/// Messages of a burst, all due at the same instant.
pub const BURST: usize = 64;
/// Bytes of a frame on the wire: 2-byte header, 16-bit length, masking key, payload.
const WIRE: usize = 8 + SIZE;
/// The most messages one run sends (a long `--measure` is cut here).
const MAX_MESSAGES: usize = 4_000_000;

/// Scenario name.
pub fn scenario() -> String {
    format!(
        "tcp loopback tail: paced feed {SIZE}B binary, one-way latency \
         (exponential gaps, mean {MEAN_GAP_US} us; {BURST}-message burst every {} ms)",
        BURST_EVERY_US / 1000.0
    )
}

/// Register the suite's rows.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    let peer = peer_core(setup);
    let first = v.len();
    rows::cases(peer, v);
    for c in &mut v[first..] {
        // Syscalls and another thread: not for `--instructions`. The sender works on a
        // schedule of its own, so the rows run whole runs in rounds, never in turns.
        c.counts = false;
        c.interleave = false;
    }
}

/// TSC ticks (or ns off x86_64) per microsecond, measured once.
pub fn ticks_per_us() -> f64 {
    static T: OnceLock<f64> = OnceLock::new();
    *T.get_or_init(|| clock::calibrate(std::time::Duration::from_millis(50)) / 1e6)
}

/// When each message of a run is due, in ticks after the run's start.
#[derive(Debug)]
pub(crate) struct Schedule {
    at: Vec<u64>,
    /// Messages due during the warm-up: received and checked, not recorded.
    warm: usize,
}

impl Schedule {
    /// The schedule of a run of `cfg`'s warm-up and sampling time; `seed` picks the gaps.
    pub fn new(cfg: &RunConfig, seed: u64) -> Self {
        let tpu = ticks_per_us();
        let warm_t = cfg.warmup.as_secs_f64() * 1e6 * tpu;
        let end = warm_t + cfg.measure.as_secs_f64() * 1e6 * tpu;
        let mut rng = SplitMix64::new(seed);
        let (mut t, mut burst) = (0.0f64, BURST_EVERY_US * tpu);
        let mut at = Vec::new();
        while at.len() < MAX_MESSAGES {
            // Uniform in (0, 1], then an exponential gap.
            let u = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
            t += -u.ln() * MEAN_GAP_US * tpu;
            while burst <= t.min(end) {
                at.extend(std::iter::repeat_n(burst as u64, BURST));
                burst += BURST_EVERY_US * tpu;
            }
            if t >= end {
                break;
            }
            at.push(t as u64);
        }
        let warm = at.iter().take_while(|&&a| (a as f64) < warm_t).count();
        Schedule { at, warm }
    }

    /// Messages in the run.
    pub fn len(&self) -> usize {
        self.at.len()
    }
}

/// The payload every message carries after its 16-byte stamp.
fn filler() -> Vec<u8> {
    payload(SIZE, 38)
}

/// A masked client frame whose first 16 payload bytes (TSC stamp, sequence number,
/// little-endian) are written in place before each send.
struct Frame {
    bytes: [u8; WIRE],
    key: [u8; 4],
}

impl Frame {
    fn new() -> Self {
        let key = SplitMix64::new(0x7a11).key();
        let mut bytes = [0u8; WIRE];
        bytes[..4].copy_from_slice(&[0x82, 0x80 | 126, (SIZE >> 8) as u8, SIZE as u8]);
        bytes[4..8].copy_from_slice(&key);
        for (i, b) in filler().iter().enumerate() {
            bytes[8 + i] = b ^ key[i % 4];
        }
        Frame { bytes, key }
    }

    #[inline(always)]
    fn stamp(&mut self, tsc: u64, seq: u64) {
        let (t, s) = (tsc.to_le_bytes(), seq.to_le_bytes());
        for i in 0..8 {
            self.bytes[8 + i] = t[i] ^ self.key[i % 4];
            self.bytes[16 + i] = s[i] ^ self.key[i % 4];
        }
    }
}

/// The sender of a run: a thread on the peer core that sends the schedule once the
/// receiver says go, and returns what it saw of the machine.
pub(crate) struct Feed {
    go: Arc<AtomicBool>,
    thread: JoinHandle<Sender>,
}

/// The sender's view of a run (ticks x [`SCALE`], recorded messages only).
struct Sender {
    /// Lateness: how long after it could have left each message left, i.e. after the
    /// later of its due time and the previous write's return. Zero when the sender ran
    /// when it should; a stall of its core (preempted while it waited) shows here.
    late: Histogram<u64>,
    /// How far behind its schedule each message left (a burst's own queueing included:
    /// its k-th message waits for k writes).
    behind: Histogram<u64>,
    /// Time in each `write` (the kernel's loopback path, which also wakes the
    /// receiver; a stall inside the call shows here).
    write: Histogram<u64>,
}

impl Feed {
    /// Start the sender on `peer` over `sock` (with a client opening handshake first
    /// when `handshake`); it waits for [`Feed::go`].
    pub fn start(peer: usize, mut sock: TcpStream, handshake: bool, sched: Arc<Schedule>) -> Self {
        sock.set_nodelay(true).expect("nodelay");
        let go = Arc::new(AtomicBool::new(false));
        let flag = go.clone();
        let thread = spawn_pinned(peer, move || {
            if handshake {
                client_handshake(&mut sock);
            }
            let mut s = Sender {
                late: new_histogram(),
                behind: new_histogram(),
                write: new_histogram(),
            };
            let mut frame = Frame::new();
            while !flag.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            // A little room for the receiver to reach its first wait.
            let t0 = clock::start() + (200.0 * ticks_per_us()) as u64;
            // When the previous write returned: a message due before it (in a burst, or
            // behind a slow write) can leave no earlier.
            let mut free = t0;
            for (k, &at) in sched.at.iter().enumerate() {
                let due = t0 + at;
                let mut now = clock::start();
                while now < due {
                    std::hint::spin_loop();
                    now = clock::start();
                }
                frame.stamp(now, k as u64);
                if sock.write_all(&frame.bytes).is_err() {
                    break; // the receiver failed; its panic tells why
                }
                let done = clock::start();
                if k >= sched.warm {
                    s.late
                        .saturating_record(now.saturating_sub(due.max(free)) * SCALE);
                    s.behind.saturating_record((now - due) * SCALE);
                    s.write.saturating_record((done - now) * SCALE);
                }
                free = done;
            }
            s
        });
        Feed { go, thread }
    }

    /// The receiver is ready: start the schedule.
    pub fn go(&self) {
        self.go.store(true, Ordering::Release);
    }

    fn finish(self) -> Sender {
        self.thread.join().expect("sender thread")
    }
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1 << 40, 3).expect("valid histogram bounds")
}

/// The receiving side's bookkeeping: checks each message's sequence, length and filler,
/// and records its one-way latency once the warm-up is over.
pub(crate) struct Recorder {
    next: u64,
    n: u64,
    warm: u64,
    hist: Histogram<u64>,
    last: u8,
    /// Messages received before their stamp (TSCs of the two cores apart): recorded as 0.
    early: u64,
}

impl Recorder {
    pub fn new(sched: &Schedule) -> Self {
        Recorder {
            next: 0,
            n: sched.len() as u64,
            warm: sched.warm as u64,
            hist: new_histogram(),
            last: filler()[SIZE - 1],
            early: 0,
        }
    }

    /// Every message arrived.
    #[inline(always)]
    pub fn done(&self) -> bool {
        self.next == self.n
    }

    /// Message `p` (its payload) arrived (now).
    #[inline(always)]
    pub fn got(&mut self, p: &[u8]) {
        let now = clock::start();
        if p.len() != SIZE {
            unexpected(&("payload length", p.len()));
        }
        let word = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().unwrap_or_default());
        self.arrived(now, word(0), word(8), p[SIZE - 1]);
    }

    /// A whole masked frame of [`WIRE`] bytes arrived (now): its stamp unmasked, the
    /// rest stepped over (the floors).
    #[inline(always)]
    pub fn got_frame(&mut self, f: &[u8]) {
        let now = clock::start();
        let key = u32::from_le_bytes(f[4..8].try_into().unwrap_or_default());
        let key = u64::from(key) | u64::from(key) << 32;
        let word =
            |i: usize| u64::from_le_bytes(f[8 + i..16 + i].try_into().unwrap_or_default()) ^ key;
        self.arrived(now, word(0), word(8), f[WIRE - 1] ^ f[4 + (SIZE - 1) % 4]);
    }

    #[inline(always)]
    fn arrived(&mut self, now: u64, stamp: u64, seq: u64, last: u8) {
        if last != self.last || seq != self.next {
            unexpected(&("message", seq, self.next, last));
        }
        self.next += 1;
        if seq >= self.warm {
            match now.checked_sub(stamp) {
                Some(d) => self.hist.saturating_record(d * SCALE),
                None => {
                    self.early += 1;
                    self.hist.saturating_record(0);
                }
            }
        }
    }
}

/// One run of one row, kept for [`verdict`].
#[derive(Debug, Clone)]
pub struct Run {
    /// The row's library column.
    pub library: String,
    /// One-way latency of every recorded message, ticks x [`SCALE`].
    pub latency: Histogram<u64>,
    /// The sender's lateness during the run (see `Sender::late`), ticks x [`SCALE`].
    pub lateness: Histogram<u64>,
    /// How far behind its schedule each message left, ticks x [`SCALE`].
    pub behind: Histogram<u64>,
    /// The sender's time in each `write` during the run, ticks x [`SCALE`].
    pub write: Histogram<u64>,
    /// Messages that arrived before their stamp (cross-core TSC offset).
    pub early: u64,
}

static RUNS: Mutex<Vec<Run>> = Mutex::new(Vec::new());

/// The runs recorded since the last call, in run order.
pub fn take_runs() -> Vec<Run> {
    std::mem::take(&mut *RUNS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// End a run: join the sender, keep the run, and return the row's measurement.
fn finish(library: &str, rec: Recorder, feed: Feed) -> Measurement {
    assert!(rec.done(), "{library}: the run ended early");
    let sender = feed.finish();
    let run = Run {
        library: library.to_owned(),
        latency: rec.hist.clone(),
        lateness: sender.late,
        behind: sender.behind,
        write: sender.write,
        early: rec.early,
    };
    RUNS.lock().unwrap_or_else(|e| e.into_inner()).push(run);
    Measurement {
        hist: rec.hist,
        batch: 1,
        rounds: Vec::new(),
    }
}

/// The seed of `library`'s next run: its k-th run uses seed k, so the rounds differ
/// and every row of a round gets the same gaps.
fn seed(library: &str) -> u64 {
    static RUNS_OF: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());
    let mut runs = RUNS_OF.lock().unwrap_or_else(|e| e.into_inner());
    let k = match runs.iter_mut().find(|(l, _)| l == library) {
        Some((_, k)) => {
            *k += 1;
            *k
        }
        None => {
            runs.push((library.to_owned(), 0));
            0
        }
    };
    0x7a11_0000 + k
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn schedule_has_gaps_bursts_and_a_warm_up() {
        let cfg = RunConfig {
            batch: 1,
            warmup: Duration::from_millis(20),
            measure: Duration::from_millis(100),
            max_samples: 0,
            count_rounds: 0,
        };
        let s = Schedule::new(&cfg, 1);
        let tpu = ticks_per_us();
        assert!(s.at.windows(2).all(|w| w[0] <= w[1]), "in order");
        // 120 ms: ~6,000 paced messages and 23 bursts of 64.
        let bursts = 23 * BURST;
        let paced = s.len() - bursts;
        assert!((5_000..7_000).contains(&paced), "{paced}");
        let same = s.at.windows(2).filter(|w| w[0] == w[1]).count();
        assert!(same >= 23 * (BURST - 1), "{same}");
        assert!((900..1_500).contains(&s.warm), "{}", s.warm);
        let last = *s.at.last().unwrap() as f64 / tpu;
        assert!((115_000.0..120_000.0).contains(&last), "{last}");
    }

    #[test]
    fn frame_stamps_unmask_to_the_stamp() {
        let mut f = Frame::new();
        f.stamp(0x0123_4567_89ab_cdef, 42);
        let p: Vec<u8> = f.bytes[8..]
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ f.key[i % 4])
            .collect();
        assert_eq!(&p[..8], &0x0123_4567_89ab_cdefu64.to_le_bytes());
        assert_eq!(&p[8..16], &42u64.to_le_bytes());
        assert_eq!(&p[16..], &filler()[16..]);
    }
}
