//! Order entry over REST: POSTs of a ~120 B JSON order on one keep-alive connection, with
//! the round-trip latency histogram (build the request + write + wait + parse the
//! response), as a trading client would send them.
//!
//! - `order_entry [ITERATIONS]`: against a local exchange-like server started in a
//!   thread of this process (the codec's `RequestReader` and `ResponseWriter` over a std
//!   socket), default 20000 orders;
//! - `order_entry URL [ITERATIONS]`: against a server you run, the orders going to
//!   `URL/order` (for example httpbin: `order_entry http://127.0.0.1:8080/anything`).
//!
//! The first 1000 orders warm up and are not measured.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tickwire::codec::http::{RequestReader, ResponseWriter};
use tickwire::rest::Client;

const WARMUP: u64 = 1000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (url, iterations) = match args.first() {
        Some(a) if a.contains("://") => (Some(a.clone()), args.get(1)),
        _ => (None, args.first()),
    };
    let iterations = match iterations.map(|n| n.parse::<u64>()) {
        None => 20_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: order_entry [URL] [ITERATIONS]");
            std::process::exit(2);
        }
    };
    let result = match url {
        Some(url) => run(&url, iterations),
        None => local_exchange().and_then(|url| run(&url, iterations)),
    };
    if let Err(e) = result {
        eprintln!("order_entry: {e:#}");
        std::process::exit(1);
    }
}

/// Send `iterations` orders (after `WARMUP` unmeasured ones) over one keep-alive
/// connection and print the round-trip latency distribution.
fn run(url: &str, iterations: u64) -> Result<(), Box<dyn std::error::Error>> {
    // Host and the URL's base path go on every request; the client's own writer and
    // reader are allocated here, once.
    let mut client = Client::builder()
        .timeout(Duration::from_secs(10))
        .default_header("X-API-KEY", "demo-key")
        .request_buffer(4096)
        .response_buffer(64 << 10)
        .connect(url)?;
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)?;
    let mut response_bytes = 0usize;
    let start = Instant::now();
    for i in 0..WARMUP + iterations {
        let t0 = Instant::now();
        let resp = client
            .post("/order")
            .query("symbol", "BTCUSDT")
            .header("Content-Type", "application/json")
            .body_writer(|w| {
                write!(
                    w,
                    r#"{{"clientOrderId":"tw-{i}","side":"BUY","type":"LIMIT","price":"{}.{:02}","quantity":"0.010"}}"#,
                    64_000 + i % 100,
                    i % 100
                )
            })
            .send()?;
        let elapsed = t0.elapsed();
        if resp.status() != 200 {
            let why = format!("order {i}: HTTP {} {}", resp.status(), resp.reason());
            return Err(why.into());
        }
        response_bytes += resp.body().len();
        if i >= WARMUP {
            hist.record(elapsed.as_nanos().max(1) as u64)?;
        }
    }
    let total = start.elapsed();
    let us = |ns: u64| ns as f64 / 1000.0;
    println!(
        "order_entry: {} orders to {url} in {total:.2?} ({:.0}/s) over {} connection(s), {response_bytes} response bytes",
        WARMUP + iterations,
        (WARMUP + iterations) as f64 / total.as_secs_f64(),
        client.stats().connects,
    );
    println!(
        "round trip of the last {iterations}, µs: min {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
        us(hist.min()),
        us(hist.value_at_quantile(0.5)),
        us(hist.value_at_quantile(0.9)),
        us(hist.value_at_quantile(0.99)),
        us(hist.value_at_quantile(0.999)),
        us(hist.max()),
    );
    Ok(())
}

/// Start the local exchange on a free port; returns its base URL.
fn local_exchange() -> Result<String, Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            match stream {
                Ok(s) => {
                    if let Err(e) = serve(s) {
                        eprintln!("exchange: connection ended: {e}");
                    }
                }
                Err(e) => eprintln!("exchange: accept: {e}"),
            }
        }
    });
    Ok(url)
}

/// Serve one keep-alive connection: each `POST /order` gets an acknowledgement with an
/// order id; anything else gets 404. Returns when the client closes.
fn serve(mut s: TcpStream) -> Result<(), Box<dyn std::error::Error>> {
    s.set_nodelay(true)?;
    let mut reader: RequestReader<Vec<u8>> = RequestReader::new(vec![0u8; 64 << 10]);
    let mut out = vec![0u8; 4096];
    let mut order_id = 1_000_000u64;
    loop {
        match reader.poll() {
            Ok(Some(req)) => {
                let n = if req.method_str() == "POST" && req.path() == "/order" {
                    order_id += 1;
                    let symbol = req
                        .query_pairs()
                        .find(|(k, _)| *k == "symbol")
                        .map_or("?", |(_, v)| v);
                    let body_len = req.body().len();
                    ResponseWriter::new(&mut out, 200, "OK")
                        .header("Content-Type", "application/json")
                        .body_writer(|w| {
                            write!(
                                w,
                                r#"{{"orderId":{order_id},"symbol":"{symbol}","status":"NEW","bytes":{body_len}}}"#
                            )
                        })
                        .finish()?
                } else {
                    ResponseWriter::new(&mut out, 404, "Not Found").finish()?
                };
                s.write_all(&out[..n])?;
                continue;
            }
            Ok(None) => {}
            Err(e) => {
                let n = ResponseWriter::new(&mut out, 400, "Bad Request")
                    .header("Connection", "close")
                    .finish()?;
                s.write_all(&out[..n])?;
                return Err(e.into());
            }
        }
        let spare = reader.spare_mut();
        if spare.is_empty() {
            return Err("request too large".into());
        }
        match s.read(spare)? {
            0 => return Ok(()),
            n => reader.commit(n),
        }
    }
}
