//! Instruction counts under Valgrind's callgrind, for `--instructions`.
//!
//! The bench binary re-runs itself under `valgrind --tool=callgrind
//! --collect-atstart=no`. In that child, the harness runs each case's batch
//! a fixed number of rounds and switches collection on only around the
//! batches ([`toggle_collect`]), so nothing but the library calls (and the
//! loop around them) is counted; after each case it asks callgrind to dump
//! ([`dump_stats_at`]) with a label naming the case and the operations done.
//! The parent reads the dumps' totals and divides. Instruction counts do not
//! depend on what else the machine runs, so this is what a regression check
//! compares.
//!
//! The requests are Valgrind's client-request sequence (valgrind.h, amd64):
//! four rotates of rdi summing to 128 bits (a no-op on real hardware) then
//! `xchg rbx, rbx`, with rax pointing at the request and rdx carrying the
//! default result. Natively they do nothing and return the default.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// `VG_USERREQ_TOOL_BASE('C','T')`: callgrind's first request.
const CT_BASE: u64 = ((b'C' as u64) << 24) | ((b'T' as u64) << 16);
const TOGGLE_COLLECT: u64 = CT_BASE + 2;
const DUMP_STATS_AT: u64 = CT_BASE + 3;
/// `VG_USERREQ__RUNNING_ON_VALGRIND`.
const RUNNING_ON_VALGRIND: u64 = 0x1001;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn request(default: u64, req: u64, arg1: u64) -> u64 {
    let args: [u64; 6] = [req, arg1, 0, 0, 0, 0];
    let mut result = default;
    // SAFETY: the rotates of rdi add up to 128 bits and leave it unchanged, and
    // `xchg rbx, rbx` exchanges rbx with itself: natively the sequence changes no
    // register but rdx (declared) and the flags (not declared preserved). Under
    // Valgrind, the tool reads `args` (alive until after the asm) and whatever
    // `arg1` points to, and writes its answer to rdx. Memory is not marked
    // untouched, so the compiler keeps `args` in memory before the asm.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") result,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn request(default: u64, _req: u64, _arg1: u64) -> u64 {
    default
}

/// Whether this process runs under Valgrind.
pub fn running_on_valgrind() -> bool {
    request(0, RUNNING_ON_VALGRIND, 0) != 0
}

/// Switch callgrind's event collection on or off (nothing natively). The
/// switch is the calling thread's own: other threads keep theirs (see
/// [`Follower`]).
#[inline(always)]
pub fn toggle_collect() {
    request(0, TOGGLE_COLLECT, 0);
}

/// Whether the measuring thread is in a counted batch (count mode only).
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Say whether a counted batch runs now: the harness sets it around each
/// counted batch, for the [`Follower`]s of peer threads.
pub fn set_counting(on: bool) {
    COUNTING.store(on, Ordering::SeqCst);
}

/// Whether a counted batch runs now (see [`set_counting`]).
pub fn counting() -> bool {
    COUNTING.load(Ordering::SeqCst)
}

/// A peer thread serving the measured operations (an echo server on the other
/// core) that should be counted too. Callgrind's collection switch is per
/// thread, so the peer keeps its own in step with the measuring thread's
/// counted batches: it calls [`sync`](Self::sync) each time an operation's
/// request arrives (its collection is on from that point while batches are
/// counted), and dropping the follower switches it off. A peer cycle counted
/// this way runs from one request's arrival to the next one's, so each counted
/// operation contributes one whole cycle (wait, read, reply); the last one
/// ends at whatever arrives after the last counted batch (the close).
/// Natively: an atomic load per request.
#[derive(Debug, Default)]
pub struct Follower {
    on: bool,
}

impl Follower {
    /// Match the measuring thread: collect while a counted batch runs.
    #[inline]
    pub fn sync(&mut self) {
        let want = counting();
        if want != self.on {
            toggle_collect();
            self.on = want;
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        if self.on {
            toggle_collect();
        }
    }
}

/// Dump the events collected since the last dump, labelled `label`, and
/// zero them (nothing natively).
pub fn dump_stats_at(label: &str) {
    let c = std::ffi::CString::new(label).expect("label without NUL");
    request(0, DUMP_STATS_AT, c.as_ptr() as u64);
}

/// The label of case `index` after `ops` operations.
pub fn label(index: usize, ops: u64) -> String {
    format!("tickwire-case {index} ops {ops}")
}

/// One dump: the case index, operations done, instructions collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dump {
    /// Index of the case in the registry.
    pub index: usize,
    /// Operations the collected region performed.
    pub ops: u64,
    /// Instructions executed (callgrind's Ir) in the collected region.
    pub instructions: u64,
}

/// Parse one callgrind output file; `None` if it is not one of our dumps.
pub fn parse_dump(text: &str) -> Option<Dump> {
    let mut id = None;
    let mut total = None;
    for line in text.lines() {
        if let Some(desc) = line.strip_prefix("desc: Trigger: Client Request: ") {
            let mut w = desc.split_whitespace();
            if w.next() == Some("tickwire-case") {
                let index = w.next()?.parse().ok()?;
                let ops = (w.next() == Some("ops")).then(|| w.next())??.parse().ok()?;
                id = Some((index, ops));
            }
        } else if let Some(t) = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))
        {
            total = t.split_whitespace().next().and_then(|v| v.parse().ok());
        }
    }
    let (index, ops) = id?;
    Some(Dump {
        index,
        ops,
        instructions: total?,
    })
}

/// Every dump in `dir` whose file name starts with `stem`.
pub fn read_dumps(dir: &Path, stem: &str) -> std::io::Result<Vec<Dump>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if !e.file_name().to_string_lossy().starts_with(stem) {
            continue;
        }
        if let Some(d) = parse_dump(&std::fs::read_to_string(e.path())?) {
            out.push(d);
        }
    }
    out.sort_by_key(|d| d.index);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natively_the_requests_do_nothing() {
        // `cargo test` does not run under Valgrind.
        assert!(!running_on_valgrind());
        toggle_collect();
        dump_stats_at("x");
        assert_eq!(request(7, CT_BASE, 0), 7);
    }

    #[test]
    fn parses_a_dump() {
        let text = "version: 1\ncreator: callgrind-3.22\npid: 12\ncmd: bench\npart: 3\n\n\
                    desc: I1 cache: \ndesc: Trigger: Client Request: tickwire-case 4 ops 1280\n\n\
                    positions: line\nevents: Ir\nsummary: 123456\n\nfn=(1) foo\n0 5\ntotals: 123456\n";
        assert_eq!(
            parse_dump(text),
            Some(Dump {
                index: 4,
                ops: 1280,
                instructions: 123_456
            })
        );
        assert_eq!(
            parse_dump("desc: Trigger: Program termination\ntotals: 5\n"),
            None
        );
        assert_eq!(label(4, 1280), "tickwire-case 4 ops 1280");
    }
}
