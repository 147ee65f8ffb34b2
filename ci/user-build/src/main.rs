//! The user-build check: what the codec's dispatchers pick in a build made the way a user
//! makes one, held to what this CPU can run, plus the answers of those paths, plus (printed,
//! not asserted: CI machines are loaded) the throughput of non-ASCII UTF-8 validation.
//!
//! Exit status 1 when a dispatcher picked a narrower path than the CPU runs (UTF-8: AVX2,
//! else SSE4.2; masking, copies and the HTTP head blocks: AVX2, else SSE2) or a path gave a
//! wrong answer.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use tickwire_codec::simd::{self, Path};

fn main() -> ExitCode {
    let paths = simd::active_paths();
    println!("active paths: {paths:?}");
    let mut failures = Vec::new();
    let want = expected();
    for (what, got, want) in [
        ("utf8", paths.utf8, want.utf8),
        ("mask", paths.mask, want.mask),
        ("copy", paths.copy, want.copy),
        ("http_head", paths.http_head, want.http_head),
    ] {
        if got != want {
            failures.push(format!(
                "{what}: dispatched to {got:?}, this CPU runs {want:?}"
            ));
        }
    }
    let text = mixed_text(2048);
    failures.extend(answers(&text));
    let mbps = throughput(&text, tickwire_codec::simd::utf8::is_valid);
    println!("utf8::is_valid, 2 KiB of mixed multi-byte text: {mbps:.0} MB/s (median of 9 rounds)");
    #[cfg(feature = "reference")]
    {
        let reference = throughput(&text, |b| simdutf8::basic::from_utf8(b).is_ok());
        println!(
            "simdutf8::basic::from_utf8 with std, same text: {reference:.0} MB/s; ours / theirs = {:.2}",
            mbps / reference
        );
    }
    let ns = request_ns(|| {
        let mut r = tickwire_codec::http::RequestReader::<_, 16>::new(vec![0u8; 1024]);
        move |head: &[u8]| {
            r.clear();
            r.feed(head);
            matches!(r.poll(), Ok(Some(req)) if req.headers().iter().count() == 6)
        }
    });
    println!(
        "RequestReader feed + poll (copy, parse, framing), a usual 6-header request head: {ns:.1} ns (median of 9 rounds)"
    );
    #[cfg(feature = "reference")]
    {
        let theirs = request_ns(|| {
            |head: &[u8]| {
                let mut h = [httparse::EMPTY_HEADER; 16];
                let mut req = httparse::Request::new(&mut h);
                matches!(req.parse(head), Ok(httparse::Status::Complete(_)))
                    && req.headers.len() == 6
            }
        });
        println!(
            "httparse::Request::parse with std (SIMD), same head: {theirs:.1} ns; ours / theirs = {:.2}",
            ns / theirs
        );
    }
    // The transport builds and links in this build too (it re-exports the codec it uses).
    let _ = tickwire::codec::simd::active_paths();
    if failures.is_empty() {
        println!("user build: ok");
        ExitCode::SUCCESS
    } else {
        for f in &failures {
            eprintln!("user build: FAILED: {f}");
        }
        ExitCode::FAILURE
    }
}

/// What the dispatchers must pick on this CPU, by std's own detection.
fn expected() -> simd::ActivePaths {
    let mut p = simd::active_paths();
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = std::is_x86_feature_detected!("avx2");
        let sse42 = std::is_x86_feature_detected!("sse4.2");
        let wide = if avx2 { Path::Avx2 } else { Path::Sse2 };
        p.utf8 = match (avx2, sse42) {
            (true, _) => Path::Avx2,
            (false, true) => Path::Sse42,
            _ => Path::Scalar,
        };
        p.mask = wide;
        p.http_head = wide;
        p.copy = if avx2 { Path::Avx2 } else { Path::Scalar };
    }
    p
}

/// `n` bytes of valid UTF-8 mixing 1- to 4-byte characters (cut at a character boundary).
fn mixed_text(n: usize) -> Vec<u8> {
    let unit = "price: 42.17 € κόσμε Ünïcödé 日本語 テキスト 𝄞🚀 ok; ";
    let mut s = String::new();
    while s.len() < n {
        s.push_str(unit);
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.into_bytes()
}

/// The dispatched paths against the standard library: UTF-8 whole and streamed, masking
/// against a byte-wise XOR, the request and response readers on a usual head.
fn answers(text: &[u8]) -> Vec<String> {
    use tickwire_codec::simd::{mask, utf8};
    let mut failures = Vec::new();
    let mut bad = text.to_vec();
    for at in [0, 63, 64, 1000, text.len() - 1] {
        let keep = bad[at];
        for b in [0x80, 0xC0, 0xF5, 0xED] {
            bad[at] = b;
            let std = std::str::from_utf8(&bad).is_ok();
            if utf8::is_valid(&bad) != std || utf8::to_str(&bad).is_some() != std {
                failures.push(format!("utf8 differs from std with {b:#x} at {at}"));
            }
        }
        bad[at] = keep;
    }
    if !utf8::is_valid(text) || utf8::validate_prefix(text) != Ok(text.len()) {
        failures.push("utf8 refused valid text".into());
    }
    let key = [0x12, 0x34, 0x56, 0x78];
    let mut masked = text.to_vec();
    mask::apply_mask(&mut masked, key, 1);
    let want: Vec<u8> = text
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ key[(i + 1) % 4])
        .collect();
    if masked != want {
        failures.push("apply_mask differs from a byte-wise XOR".into());
    }
    let mut r = tickwire_codec::http::RequestReader::<_, 16>::new(vec![0u8; 4096]);
    r.feed(b"GET /api/v3/ticker/price?symbol=BTCUSDT HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: a-user\r\nAccept: */*\r\n\r\n");
    match r.poll() {
        Ok(Some(req))
            if req.target() == "/api/v3/ticker/price?symbol=BTCUSDT"
                && req.header_str("user-agent") == Some("a-user") => {}
        other => failures.push(format!("request head: {other:?}")),
    }
    failures
}

/// MB/s of `check` over `text`, the median of 9 rounds of about 20 ms each.
fn throughput(text: &[u8], check: impl Fn(&[u8]) -> bool) -> f64 {
    let reps = 4000;
    let mut rounds: Vec<f64> = (0..9)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                assert!(check(black_box(text)));
            }
            (text.len() * reps) as f64 / t.elapsed().as_secs_f64() / 1e6
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}

/// A usual request head (6 headers, a query string).
const REQUEST: &[u8] = b"GET /api/v3/ticker/price?symbol=BTCUSDT&window=1m HTTP/1.1\r\n\
Host: api.example.com\r\nUser-Agent: tickwire-user-build/0.0\r\nAccept: application/json\r\n\
Accept-Encoding: identity\r\nX-MBX-APIKEY: vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A\r\n\
Connection: keep-alive\r\n\r\n";

/// ns per parse of [`REQUEST`] by the parser `make` builds, the median of 9 rounds.
fn request_ns<F: FnMut(&[u8]) -> bool>(make: impl Fn() -> F) -> f64 {
    let mut parse = make();
    let reps = 20_000;
    let mut rounds: Vec<f64> = (0..9)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                assert!(parse(black_box(REQUEST)));
            }
            t.elapsed().as_secs_f64() * 1e9 / reps as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}
