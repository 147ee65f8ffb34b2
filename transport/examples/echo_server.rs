//! Echo server for Autobahn's fuzzingclient: one thread, one `mio::Poll`, many
//! connections, evented mode. Echoes text and binary messages up to 16 MiB; pings,
//! pongs and the close handshake are handled by the library. Built with feature
//! `deflate`, it accepts permessage-deflate.
//!
//! Usage: `echo_server [--tokio] [ADDR]` (default `127.0.0.1:9002`, or the `ADDR`
//! variable). `--tokio` (feature `tokio`): the same echo through the tokio adapter, one
//! task per connection on a `current_thread` runtime with a `LocalSet`. `--smol`
//! (feature `futures-io`): the same echo through the futures-io driver, one task per
//! connection on a `smol::LocalExecutor` on this thread (async-io's reactor).

use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use tickwire::ws::{Error, Message, Sender, Server, ServerConnection};

const LISTENER: Token = Token(usize::MAX);
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

/// The echo of a received message, written from the read buffer (no copy).
fn echo(msg: Message<'_>, tx: &mut Sender<'_>) -> Result<(), Error> {
    match msg {
        Message::Text(t) => tx.send_text(t),
        Message::Binary(b) => tx.send_binary(b),
        _ => Ok(()),
    }
}

fn main() {
    let addr = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .or_else(|| std::env::var("ADDR").ok())
        .unwrap_or_else(|| "127.0.0.1:9002".to_owned());
    let result = if std::env::args().any(|a| a == "--tokio") {
        run_tokio(&addr)
    } else if std::env::args().any(|a| a == "--smol") {
        run_smol(&addr)
    } else {
        run(&addr)
    };
    if let Err(e) = result {
        eprintln!("echo_server: {e:#}");
        std::process::exit(1);
    }
}

fn run(addr: &str) -> Result<(), Error> {
    let mut server = with_deflate!(Server::builder())
        .max_message_size(MAX_MESSAGE)
        // Room for the largest echo and a pong: a message is read only when nothing
        // waits to be written, so its echo always fits.
        .write_buffer_size(MAX_MESSAGE + 1024)
        .handshake_timeout(Duration::from_secs(10))
        .close_timeout(Duration::from_secs(5))
        .bind(addr)?;
    println!("echo_server: listening on {}", server.local_addr()?);
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut server, LISTENER, Interest::READABLE)?;
    let mut slots: Vec<Option<ServerConnection>> = Vec::new();
    let mut events = Events::with_capacity(256);
    loop {
        poll.poll(&mut events, Some(Duration::from_millis(250)))?;
        for event in events.iter() {
            if event.token() == LISTENER {
                accept_all(&mut server, &poll, &mut slots)?;
                continue;
            }
            let i = event.token().0;
            let Some(conn) = slots.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            if !service(conn) {
                drop_slot(&poll, &mut slots[i]);
            }
        }
        let now = Instant::now();
        for entry in slots.iter_mut() {
            let expired = entry.as_mut().is_some_and(|c| {
                c.timeout_at().is_some_and(|t| t <= now) && c.handle_timeout(now).is_err()
            });
            if expired {
                drop_slot(&poll, entry);
            }
        }
    }
}

fn accept_all(
    server: &mut Server,
    poll: &Poll,
    slots: &mut Vec<Option<ServerConnection>>,
) -> Result<(), Error> {
    while let Some(mut conn) = server.try_accept()? {
        let i = match slots.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                slots.push(None);
                slots.len() - 1
            }
        };
        poll.registry()
            .register(&mut conn, Token(i), Interest::READABLE | Interest::WRITABLE)?;
        // Bytes may have arrived before registration: drive once now.
        if service(&mut conn) {
            slots[i] = Some(conn);
        } else {
            let _ = poll.registry().deregister(&mut conn);
        }
    }
    Ok(())
}

fn drop_slot(poll: &Poll, entry: &mut Option<ServerConnection>) {
    if let Some(mut conn) = entry.take() {
        let _ = poll.registry().deregister(&mut conn);
    }
}

/// Flush, then echo messages while nothing waits to be written (so each echo finds
/// room; with bytes left, stop reading until the socket takes more). `false`: the
/// connection is finished.
fn service(conn: &mut ServerConnection) -> bool {
    loop {
        if conn.wants_write() && conn.flush().is_err() {
            return false;
        }
        if conn.wants_write() {
            return true;
        }
        match conn.try_recv_with(echo) {
            Ok(Some(())) => {}
            Ok(None) => break,
            // A protocol error was answered with its close code; keep the connection
            // until its close is over (the peer's end, or the close timeout).
            Err(_) => return !conn.is_closed() || conn.wants_write(),
        }
    }
    !conn.is_closed() || conn.wants_write()
}

#[cfg(feature = "tokio")]
fn run_tokio(addr: &str) -> Result<(), Error> {
    use tickwire::tokio::ws::{Server, ServerConnection};

    async fn echo_all(conn: &mut ServerConnection) -> Result<(), Error> {
        loop {
            match conn.recv_with(echo).await {
                Ok(Some(())) => {}
                Ok(None) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let mut server = with_deflate!(Server::builder())
            .max_message_size(MAX_MESSAGE)
            .write_buffer_size(MAX_MESSAGE + 1024)
            .handshake_timeout(Duration::from_secs(10))
            .close_timeout(Duration::from_secs(5))
            .bind(addr)
            .await?;
        println!("echo_server (tokio): listening on {}", server.local_addr()?);
        loop {
            let conn = server.accept().await?;
            tokio::task::spawn_local(async move {
                let mut conn = conn;
                // Protocol errors were answered with their close code already;
                // receiving on finishes the close.
                if echo_all(&mut conn).await.is_err() {
                    while let Ok(Some(_)) = conn.recv().await {}
                }
            });
        }
    })
}

#[cfg(not(feature = "tokio"))]
fn run_tokio(_addr: &str) -> Result<(), Error> {
    eprintln!("echo_server: --tokio needs feature `tokio` (cargo build --features tokio)");
    std::process::exit(2);
}

#[cfg(feature = "futures-io")]
fn run_smol(addr: &str) -> Result<(), Error> {
    use tickwire::futures_io::ws::{Server, ServerConnection};

    async fn echo_all(conn: &mut ServerConnection) -> Result<(), Error> {
        while conn.recv_with(echo).await?.is_some() {}
        Ok(())
    }

    let ex = smol::LocalExecutor::new();
    smol::block_on(ex.run(async {
        let mut server = with_deflate!(Server::builder())
            .max_message_size(MAX_MESSAGE)
            .write_buffer_size(MAX_MESSAGE + 1024)
            .handshake_timeout(Duration::from_secs(10))
            .close_timeout(Duration::from_secs(5))
            .bind(addr)?;
        println!("echo_server (smol): listening on {}", server.local_addr()?);
        loop {
            let mut conn = server.accept().await?;
            ex.spawn(async move {
                // Protocol errors were answered with their close code already;
                // receiving on finishes the close.
                if echo_all(&mut conn).await.is_err() {
                    while let Ok(Some(_)) = conn.recv().await {}
                }
            })
            .detach();
        }
    }))
}

#[cfg(not(feature = "futures-io"))]
fn run_smol(_addr: &str) -> Result<(), Error> {
    eprintln!("echo_server: --smol needs feature `futures-io` (cargo build --features futures-io)");
    std::process::exit(2);
}
