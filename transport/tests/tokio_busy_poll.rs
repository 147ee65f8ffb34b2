//! Busy-poll receive mode on the tokio transport (`recv_mode`, as the blocking builders
//! have it): a `recv` that finds nothing reads again at once instead of yielding to the
//! reactor. Shown on a current-thread runtime: while the client's `recv` waits for a
//! message, a second future on the same task counts the polls it gets; spinning, it gets
//! none (the `recv` finishes within its first poll). Read timeouts still hold.

#![cfg(all(feature = "tokio", unix))]

use std::cell::Cell;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tickwire::socket::RecvMode;
use tickwire::tokio::ws::ClientBuilder;
use tickwire::ws::{self, Error, Message};

/// A blocking server on its own thread that sends one text per `()` it is told to.
fn server() -> (String, mpsc::Sender<()>) {
    let mut srv = ws::Server::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/", srv.local_addr().unwrap());
    let (tx, rx) = mpsc::channel::<()>();
    thread::spawn(move || {
        let mut c = srv.accept().unwrap();
        c.handshake().unwrap();
        for (i, ()) in rx.into_iter().enumerate() {
            c.send_text(&format!("tick {i}")).unwrap();
        }
        let _ = c.close(ws::CloseCode::NORMAL, "");
        while let Ok(Some(_)) = c.recv() {}
    });
    (url, tx)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn spinning_recv_never_yields_to_the_runtime() {
    for mode in [RecvMode::Spin, RecvMode::SpinFor(Duration::from_secs(3600))] {
        let (url, send) = server();
        runtime().block_on(async {
            let mut c = ClientBuilder::new()
                .recv_mode(mode)
                .connect(&url)
                .await
                .unwrap();
            for i in 0..50 {
                let (waiting, done, polls) = (Cell::new(false), Cell::new(false), Cell::new(0));
                let recv = async {
                    waiting.set(true);
                    // The server sends only now: the first read finds nothing.
                    send.send(()).unwrap();
                    let m = c.recv().await.unwrap();
                    assert_eq!(m, Some(Message::Text(&format!("tick {i}"))), "{mode:?}");
                    done.set(true);
                };
                let other = async {
                    while !done.get() {
                        if waiting.get() {
                            polls.set(polls.get() + 1);
                        }
                        tokio::task::yield_now().await;
                    }
                };
                tokio::join!(recv, other);
                assert_eq!(polls.get(), 0, "{mode:?}, message {i}: recv yielded");
            }
        });
    }
}

#[test]
fn spinning_recv_honours_the_read_timeout() {
    let (url, _send) = server();
    runtime().block_on(async {
        let mut c = ClientBuilder::new()
            .recv_mode(RecvMode::Spin)
            .read_timeout(Some(Duration::from_millis(30)))
            .connect(&url)
            .await
            .unwrap();
        assert!(matches!(c.recv().await, Err(Error::ReadTimeout)));
    });
}
