//! Client for Autobahn's fuzzingserver: runs every case, echoing text and binary
//! messages, then asks the server to write its reports. Blocking mode. Built with feature `deflate`,
//! it offers permessage-deflate.
//!
//! Usage: `autobahn_client [--tokio] [BASE_URL] [AGENT]` (default
//! `ws://127.0.0.1:9001 tickwire`). `--tokio` (feature `tokio`): the same client through
//! the tokio adapter on a `current_thread` runtime.

use std::time::Duration;

use tickwire::ws::{Client, ClientBuilder, Error, Message, Sender};

const MAX_MESSAGE: usize = 16 << 20;

/// The builder `$b`, with permessage-deflate on (default parameters) when built with
/// feature `deflate` (Autobahn's cases 12 and 13), as it is otherwise.
macro_rules! with_deflate {
    ($b:expr) => {{
        #[cfg(feature = "deflate")]
        let b = $b.deflate(tickwire::codec::ws::deflate::DeflateConfig::default());
        #[cfg(not(feature = "deflate"))]
        let b = $b;
        b
    }};
}

fn builder() -> ClientBuilder {
    with_deflate!(Client::builder())
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
    let result = if std::env::args().any(|a| a == "--tokio") {
        run_tokio(base, &agent)
    } else {
        run(base, &agent)
    };
    if let Err(e) = result {
        eprintln!("autobahn_client: {e:#}");
        std::process::exit(1);
    }
}

fn run(base: &str, agent: &str) -> Result<(), Error> {
    let count = case_count(base)?;
    println!("autobahn_client: {count} cases");
    for case in 1..=count {
        let url = format!("{base}/runCase?case={case}&agent={agent}");
        let outcome = match builder().connect(&url) {
            Ok(mut c) => {
                let outcome = echo(&mut c);
                if outcome.is_err() {
                    // The error came back at once; receiving on finishes the close
                    // (the peer's end of the stream, or the close timeout).
                    while let Ok(Some(_)) = c.recv() {}
                }
                outcome
            }
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

/// The echo of one message, written from the read buffer (no copy); a close already
/// under way (the peer's close crossed ours) is not an error here.
fn reply(msg: Message<'_>, tx: &mut Sender<'_>) -> Result<(), Error> {
    let sent = match msg {
        Message::Text(t) => tx.send_text(t),
        Message::Binary(b) => tx.send_binary(b),
        _ => Ok(()),
    };
    match sent {
        Err(Error::AlreadyClosed) => Ok(()),
        sent => sent,
    }
}

/// Echo data messages until the connection closes.
fn echo(c: &mut Client) -> Result<(), Error> {
    while c.recv_with(reply)?.is_some() {}
    Ok(())
}

#[cfg(feature = "tokio")]
fn run_tokio(base: &str, agent: &str) -> Result<(), Error> {
    use tickwire::tokio::ws::{Client as AsyncClient, ClientBuilder as AsyncBuilder};

    fn builder() -> AsyncBuilder {
        AsyncBuilder::from(self::builder())
    }

    /// Echo data messages until the connection closes.
    async fn echo(c: &mut AsyncClient) -> Result<(), Error> {
        while c.recv_with(reply).await?.is_some() {}
        Ok(())
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut c = builder().connect(&format!("{base}/getCaseCount")).await?;
        let mut count = None;
        while let Some(msg) = c.recv().await? {
            if let (None, Message::Text(t)) = (count, msg) {
                count = t.trim().parse().ok();
            }
        }
        let count: u32 = count.unwrap_or(0);
        println!("autobahn_client (tokio): {count} cases");
        for case in 1..=count {
            let url = format!("{base}/runCase?case={case}&agent={agent}");
            let outcome = match builder().connect(&url).await {
                Ok(mut c) => {
                    let outcome = echo(&mut c).await;
                    if outcome.is_err() {
                        while let Ok(Some(_)) = c.recv().await {}
                    }
                    outcome
                }
                Err(e) => Err(e),
            };
            match outcome {
                Ok(()) => println!("case {case}/{count}: closed"),
                Err(e) => println!("case {case}/{count}: {e}"),
            }
        }
        let mut c = builder()
            .connect(&format!("{base}/updateReports?agent={agent}"))
            .await?;
        while c.recv().await?.is_some() {}
        println!("autobahn_client (tokio): reports updated");
        Ok(())
    })
}

#[cfg(not(feature = "tokio"))]
fn run_tokio(_base: &str, _agent: &str) -> Result<(), Error> {
    eprintln!("autobahn_client: --tokio needs feature `tokio` (cargo build --features tokio)");
    std::process::exit(2);
}
