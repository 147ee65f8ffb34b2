//! Bursts of messages with idle gaps between them, over ws:// and wss://, received by
//! the async client (current_thread and multi-thread) and by the blocking one. After
//! a short read the connection waits for readiness before reading again (one system
//! call less per message); these tests check that no arrival is ever missed: bursts
//! larger than the read buffer (full reads), many frames per read, messages split
//! over TLS records, single small messages after a pause. A missed wake-up shows as
//! the read timeout, not a hang.
#![cfg(all(feature = "tokio", feature = "tls", unix))]

mod tls_util;

use std::net::SocketAddr;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tickwire::tls::{TlsConfig, TlsServerConfig};
use tickwire::tokio::ws::Client;
use tickwire::ws::{self, Message};
use tls_util::Ca;

const T: Duration = Duration::from_secs(10);
/// Small enough that a burst fills it (reads that return all they were asked for).
const READ_BUFFER: usize = 32 << 10;
const MAX_MESSAGE: usize = 20 << 10;
const BURSTS: usize = 12;

/// The sizes of burst `b`'s messages: one small message alone, many tiny ones, and
/// mixes up to 20 KiB (more than one TLS record).
fn burst(b: usize) -> Vec<usize> {
    match b % 4 {
        0 => vec![40],
        1 => (0..200).map(|i| 1 + i % 77).collect(),
        2 => vec![MAX_MESSAGE, 3, MAX_MESSAGE - 1, 16_384, 16_385, 77],
        _ => (0..40).map(|i| (i * 997) % MAX_MESSAGE).collect(),
    }
}

fn body(b: usize, i: usize, n: usize) -> Vec<u8> {
    (0..n).map(|k| (b * 31 + i * 7 + k) as u8).collect()
}

/// A blocking server that sends every burst back to back, then waits for the
/// client's "next" before the next burst (the gap the client waits through).
fn serve(tls: Option<TlsServerConfig>) -> (SocketAddr, JoinHandle<()>) {
    let builder = ws::Server::builder()
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .max_message_size(MAX_MESSAGE);
    let builder = match tls {
        Some(t) => builder.tls(t),
        None => builder,
    };
    let mut server = builder.bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut s = server.accept().unwrap();
        for b in 0..BURSTS {
            thread::sleep(Duration::from_millis(5));
            for (i, n) in burst(b).into_iter().enumerate() {
                s.send_binary(&body(b, i, n)).unwrap();
            }
            match s.recv().unwrap() {
                Some(Message::Text("next")) => {}
                other => panic!("{other:?}"),
            }
        }
        s.close(ws::CloseCode::NORMAL, "").unwrap();
        while s.recv().unwrap().is_some() {}
    });
    (addr, h)
}

fn url(tls: bool, addr: SocketAddr) -> String {
    if tls {
        format!("wss://localhost:{}/", addr.port())
    } else {
        format!("ws://{addr}/")
    }
}

fn check(m: Option<Message<'_>>, b: usize, i: usize, n: usize) {
    match m {
        Some(Message::Binary(got)) => assert_eq!(got, &body(b, i, n)[..], "burst {b} #{i}"),
        other => panic!("burst {b} #{i}: {other:?}"),
    }
}

fn pki(tls: bool) -> (Option<TlsConfig>, Option<TlsServerConfig>) {
    if !tls {
        return (None, None);
    }
    let ca = Ca::new("burst CA");
    let leaf = ca.server(&["localhost"]);
    (Some(ca.client_config()), Some(leaf.server_config()))
}

async fn async_client(tls: bool) {
    let (client_cfg, server_cfg) = pki(tls);
    let (addr, h) = serve(server_cfg);
    let mut builder = Client::builder()
        .read_timeout(Some(T))
        .read_buffer_size(READ_BUFFER)
        .max_message_size(MAX_MESSAGE);
    if let Some(c) = client_cfg {
        builder = builder.tls(c);
    }
    let mut c = builder.connect(&url(tls, addr)).await.unwrap();
    for b in 0..BURSTS {
        for (i, n) in burst(b).into_iter().enumerate() {
            check(c.recv().await.unwrap(), b, i, n);
        }
        c.send_text("next").await.unwrap();
    }
    assert!(matches!(c.recv().await.unwrap(), Some(Message::Close(_))));
    assert!(c.recv().await.unwrap().is_none());
    tokio::task::spawn_blocking(move || h.join().unwrap())
        .await
        .unwrap();
}

fn blocking_client(tls: bool) {
    let (client_cfg, server_cfg) = pki(tls);
    let (addr, h) = serve(server_cfg);
    let mut builder = ws::Client::builder()
        .read_timeout(Some(T))
        .read_buffer_size(READ_BUFFER)
        .max_message_size(MAX_MESSAGE);
    if let Some(c) = client_cfg {
        builder = builder.tls(c);
    }
    let mut c = builder.connect(&url(tls, addr)).unwrap();
    for b in 0..BURSTS {
        for (i, n) in burst(b).into_iter().enumerate() {
            check(c.recv().unwrap(), b, i, n);
        }
        c.send_text("next").unwrap();
    }
    assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
    assert!(c.recv().unwrap().is_none());
    h.join().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn bursts_ws_current_thread() {
    async_client(false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn bursts_wss_current_thread() {
    async_client(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bursts_ws_and_wss_multi_thread() {
    tokio::spawn(async {
        async_client(false).await;
        async_client(true).await;
    })
    .await
    .unwrap();
}

#[test]
fn bursts_ws_and_wss_blocking() {
    blocking_client(false);
    blocking_client(true);
}
