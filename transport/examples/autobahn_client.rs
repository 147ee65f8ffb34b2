//! Client for Autobahn's fuzzingserver: runs every case, echoing text and binary
//! messages, then asks the server to write its reports. Blocking mode.
//!
//! Usage: `autobahn_client [BASE_URL] [AGENT]` (default `ws://127.0.0.1:9001 tickwire`).

use std::time::Duration;

use tickwire::ws::{Client, ClientBuilder, Error, Message};

const MAX_MESSAGE: usize = 16 << 20;

fn builder() -> ClientBuilder {
    Client::builder()
        .max_message_size(MAX_MESSAGE)
        .write_buffer_size(MAX_MESSAGE + 64)
        .read_timeout(Some(Duration::from_secs(60)))
        .close_timeout(Duration::from_secs(5))
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let base = args
        .next()
        .unwrap_or_else(|| "ws://127.0.0.1:9001".to_owned());
    let agent = args.next().unwrap_or_else(|| "tickwire".to_owned());
    let base = base.trim_end_matches('/');
    if let Err(e) = run(base, &agent) {
        eprintln!("autobahn_client: {e}");
        std::process::exit(1);
    }
}

fn run(base: &str, agent: &str) -> Result<(), Error> {
    let count = case_count(base)?;
    println!("autobahn_client: {count} cases");
    let mut scratch = Vec::with_capacity(MAX_MESSAGE);
    for case in 1..=count {
        let url = format!("{base}/runCase?case={case}&agent={agent}");
        let outcome = match builder().connect(&url) {
            Ok(mut c) => echo(&mut c, &mut scratch),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(()) => println!("case {case}/{count}: closed"),
            Err(e) => println!("case {case}/{count}: {e}"),
        }
    }
    let mut c = builder().connect(&format!("{base}/updateReports?agent={agent}"))?;
    while c.recv()?.is_some() {}
    println!("autobahn_client: reports updated");
    Ok(())
}

/// The first text message of `/getCaseCount` is the number of cases.
fn case_count(base: &str) -> Result<u32, Error> {
    let mut c = builder().connect(&format!("{base}/getCaseCount"))?;
    let mut count = None;
    while let Some(msg) = c.recv()? {
        if let (None, Message::Text(t)) = (count, msg) {
            count = t.trim().parse().ok();
        }
    }
    Ok(count.unwrap_or(0))
}

/// Echo data messages until the connection closes.
fn echo(c: &mut Client, scratch: &mut Vec<u8>) -> Result<(), Error> {
    loop {
        let text = match c.recv()? {
            None => return Ok(()),
            Some(Message::Text(t)) => {
                scratch.clear();
                scratch.extend_from_slice(t.as_bytes());
                true
            }
            Some(Message::Binary(b)) => {
                scratch.clear();
                scratch.extend_from_slice(b);
                false
            }
            Some(_) => continue,
        };
        let sent = if text {
            c.send_text(std::str::from_utf8(scratch).unwrap_or_default())
        } else {
            c.send_binary(scratch)
        };
        match sent {
            Ok(()) | Err(Error::AlreadyClosed) => {}
            Err(e) => return Err(e),
        }
    }
}
