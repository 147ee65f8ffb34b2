//! `shutdown_handle`: a thread blocked in `recv` on 127.0.0.1 returns `Error::Shutdown`
//! promptly when another thread calls `shutdown()`: sleeping in `read(2)` (no timer
//! running) and waiting in the connection's poll (keepalive on), client and server side;
//! every later call says `Shutdown` too.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tickwire::ws::{Client, ClientBuilder, Error, Server, ServerConnection};

/// Far longer than a wake-up takes, far shorter than the test's patience.
const PROMPT: Duration = Duration::from_secs(5);

/// A server whose connection answers the handshake and then stays silent, handed back
/// through the channel.
fn silent_server() -> (String, mpsc::Receiver<ServerConnection>) {
    let mut server = Server::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/", server.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut conn = server.accept().unwrap();
        conn.handshake().unwrap();
        let _ = tx.send(conn);
    });
    (url, rx)
}

/// `recv` in a thread of its own; the result comes back through the channel.
fn recv_in_thread(mut c: Client) -> mpsc::Receiver<(Result<(), Error>, Client)> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let r = c.recv().map(|_| ());
        let _ = tx.send((r, c));
    });
    rx
}

fn blocked_recv_returns_shutdown(builder: ClientBuilder) {
    let (url, server) = silent_server();
    let mut c = builder.connect(&url).unwrap();
    let _server = server.recv().unwrap();
    let stop = c.shutdown_handle().unwrap();
    let done = recv_in_thread(c);
    // Give the reader a moment to block (the outcome is the same if it has not yet).
    assert!(done.recv_timeout(Duration::from_millis(50)).is_err());
    stop.shutdown().unwrap();
    let (r, mut c) = done.recv_timeout(PROMPT).expect("recv did not return");
    assert!(matches!(r, Err(Error::Shutdown)), "{r:?}");
    assert!(matches!(c.recv(), Err(Error::Shutdown)));
    assert!(matches!(c.send_text("late"), Err(Error::Shutdown)));
    stop.shutdown().unwrap(); // again: nothing happens
}

#[test]
fn recv_sleeping_in_read_returns_shutdown() {
    blocked_recv_returns_shutdown(Client::builder());
}

#[test]
fn recv_waiting_on_its_timers_returns_shutdown() {
    blocked_recv_returns_shutdown(
        Client::builder()
            .keepalive(Some(Duration::from_secs(30)))
            .read_timeout(Some(Duration::from_secs(60))),
    );
}

#[test]
fn server_connection_recv_returns_shutdown() {
    let (url, server) = silent_server();
    let _client = Client::connect(&url).unwrap();
    let mut conn = server.recv().unwrap();
    let stop = conn.shutdown_handle().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(conn.recv().map(|_| ()));
    });
    stop.shutdown().unwrap();
    let r = rx.recv_timeout(PROMPT).expect("recv did not return");
    assert!(matches!(r, Err(Error::Shutdown)), "{r:?}");
}
