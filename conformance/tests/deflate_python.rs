//! The permessage-deflate streams (`tickwire_codec::ws::deflate`) against C zlib, through
//! Python's `zlib` module (raw streams, `wbits = -N`), as RFC 7692 peers use it:
//! - what our Deflater makes, zlib inflates, message by message, for every window size
//!   and both context-takeover settings (a fresh decompressobj per message without
//!   takeover: our output must not reach into earlier messages);
//! - what zlib compresses (sync flush, tail stripped) our Inflater inflates;
//! - window 8 (which we compress with 9 bits): C zlib with an 8-bit window inflates it
//!   with context carried across messages, where a 10-bit stream fails ("invalid distance
//!   too far back"), so the 256-byte promise is kept.
//!
//! Without `python3` the test skips loudly, unless `TICKWIRE_REQUIRE_PEERS` is set (CI).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::thread;

use tickwire_codec::ws::deflate::{Deflater, Inflater};

/// Line protocol, one request per line, one answer line each:
/// `D key bits fresh hex` inflates `hex` + tail with stream `key` (a new one when `fresh`
/// is 1); `C key bits fresh hex` compresses with stream `key`. Answers: `OK hex` or
/// `ERR message`.
const SCRIPT: &str = r#"
import sys, zlib
TAIL = b"\x00\x00\xff\xff"
inf, dfl = {}, {}
for line in sys.stdin:
    op, key, bits, fresh, data = line.split()
    bits, data = int(bits), b"" if data == "-" else bytes.fromhex(data)
    try:
        if op == "D":
            if fresh == "1" or key not in inf:
                inf[key] = zlib.decompressobj(wbits=-bits)
            out = inf[key].decompress(data + TAIL)
        else:
            if fresh == "1" or key not in dfl:
                dfl[key] = zlib.compressobj(6, zlib.DEFLATED, -max(bits, 9))
            out = dfl[key].compress(data) + dfl[key].flush(zlib.Z_SYNC_FLUSH)
            assert out.endswith(TAIL)
            out = out[:-4]
        print("OK", out.hex() or "-")
    except Exception as e:
        print("ERR", str(e).replace(" ", "_"))
sys.stdout.flush()
"#;

fn python() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import zlib"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("TICKWIRE_REQUIRE_PEERS").is_none(),
            "python3 with zlib is required (TICKWIRE_REQUIRE_PEERS is set)"
        );
        eprintln!("SKIPPED: no python3 with zlib on this machine");
    }
    ok
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Send `requests` (lines) to one Python process; its answers, in order.
fn ask(requests: Vec<String>) -> Vec<Result<Vec<u8>, String>> {
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut stdin = child.stdin.take().unwrap();
    let n = requests.len();
    let writer = thread::spawn(move || {
        for r in requests {
            writeln!(stdin, "{r}").unwrap();
        }
    });
    let answers: Vec<_> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| {
            let l = l.unwrap();
            match l.split_once(' ') {
                Some(("OK", h)) => Ok(unhex(h)),
                Some((_, e)) => Err(e.to_string()),
                None => Err(l),
            }
        })
        .collect();
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(answers.len(), n);
    answers
}

/// JSON-like messages, with an empty one and a long repetitive one.
fn messages() -> Vec<Vec<u8>> {
    let mut m: Vec<Vec<u8>> = (0..12)
        .map(|i| {
            format!(
                "{{\"e\":\"depthUpdate\",\"s\":\"ETHUSDT\",\"u\":{},\"b\":[[\"3000.{:02}\",\"{}.5\"]]}}",
                7_000_000 + i,
                i,
                i * 3
            )
            .into_bytes()
        })
        .collect();
    m.insert(4, Vec::new());
    m.push(b"abcdefgh".repeat(3000));
    m.push(
        (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect(),
    );
    m
}

#[test]
fn our_deflate_zlib_inflates_and_back() {
    if !python() {
        return;
    }
    let msgs = messages();
    let mut requests = Vec::new();
    let mut expect = Vec::new();
    for bits in 8..=15u8 {
        for nct in [false, true] {
            let key = format!("d{bits}{nct}");
            let mut def = Deflater::new(bits, nct, 6, 0);
            for m in &msgs {
                let mut c = Vec::new();
                def.compress(m, &mut c).unwrap();
                requests.push(format!("D {key} {bits} {} {}", u8::from(nct), hex(&c)));
                expect.push(m.clone());
            }
        }
    }
    for (i, (got, want)) in ask(requests).into_iter().zip(expect).enumerate() {
        assert_eq!(got.as_deref(), Ok(&want[..]), "request {i}");
    }

    // zlib compresses, we inflate.
    let mut requests = Vec::new();
    for bits in 8..=15u8 {
        for nct in [false, true] {
            for m in &msgs {
                requests.push(format!(
                    "C c{bits}{nct} {bits} {} {}",
                    u8::from(nct),
                    hex(m)
                ));
            }
        }
    }
    let mut answers = ask(requests).into_iter();
    for bits in 8..=15u8 {
        for nct in [false, true] {
            let mut inf = Inflater::new(bits, nct);
            for (i, m) in msgs.iter().enumerate() {
                let c = answers.next().unwrap().unwrap();
                let mut out = Vec::new();
                inf.inflate(&c, &mut out, 1 << 20)
                    .unwrap_or_else(|e| panic!("bits {bits} nct {nct} msg {i}: {e}"));
                assert_eq!(&out, m, "bits {bits} nct {nct} msg {i}");
            }
        }
    }
}

#[test]
fn window_8_stays_within_256_bytes_for_c_zlib() {
    if !python() {
        return;
    }
    // Noise of a period of `p` bytes, one period per message: the next message's best
    // matches are `p` bytes back, in the previous message.
    let unit = |p: usize| -> Vec<u8> {
        (0..p as u32)
            .map(|i| (i.wrapping_add(p as u32).wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect()
    };
    let mut requests = Vec::new();
    for (deflate_bits, periods) in [(8u8, 200..=300usize), (10, 260..=260)] {
        for p in periods {
            let mut def = Deflater::new(deflate_bits, false, 9, 0);
            let m = unit(p);
            for _ in 0..3 {
                let mut c = Vec::new();
                def.compress(&m, &mut c).unwrap();
                requests.push(format!("D w{deflate_bits}p{p} 8 0 {}", hex(&c)));
            }
        }
    }
    let answers = ask(requests);
    let (eight, ten) = answers.split_at(answers.len() - 3);
    for (i, a) in eight.iter().enumerate() {
        let p = 200 + i / 3;
        assert_eq!(
            a.as_deref(),
            Ok(&unit(p)[..]),
            "period {p}, message {}",
            i % 3
        );
    }
    // The check can fail: a 10-bit stream reaches 260 bytes back.
    assert!(
        ten[1..]
            .iter()
            .any(|a| a.as_ref().is_err_and(|e| e.contains("too_far_back"))),
        "{ten:?}"
    );
}
