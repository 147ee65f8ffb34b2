//! Interop with tungstenite through the futures-io driver, over 127.0.0.1, on two
//! executors: smol (async-io's reactor and timers) and nexus-async-rt (its own
//! reactor and timer wheel). A tungstenite server (std thread) against the async
//! tickwire client, and a tungstenite client against the async tickwire server: data
//! of several sizes, fragments both ways, ping/pong both ways, close from both ends.
#![cfg(unix)]

#[path = "../../transport/tests/nexus_util/mod.rs"]
mod nexus_util;
mod tungstenite_peer;

use std::time::Duration;

use futures_io::{AsyncRead, AsyncWrite};
use nexus_util::{NexusTcp, NexusTimer};
use tickwire::futures_io::Timer;
use tickwire::futures_io::ws::{
    Client, ClientBuilder, CloseCode, CloseFrame, Message, ServerBuilder, ServerConnection,
};
use tungstenite::Message as TMsg;
use tungstenite_peer::{SIZES, T, pattern, text_of, tungstenite_client, tungstenite_server};

fn client_builder<Tm: Timer>() -> ClientBuilder<Tm> {
    ClientBuilder::new()
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .close_timeout(Duration::from_millis(500))
        .timer::<Tm>()
}

fn server_builder<Tm: Timer>() -> ServerBuilder<Tm> {
    ServerBuilder::new()
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .close_timeout(Duration::from_millis(500))
        .timer::<Tm>()
}

/// Every size both ways against the tungstenite server, then our close.
async fn data_and_close<S, Tm>(c: &mut Client<S, Tm>)
where
    S: AsyncRead + AsyncWrite + Unpin,
    Tm: Timer,
{
    for n in SIZES {
        let t = text_of(n);
        c.send_text(&t).await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(Message::Text(&t)), "text {n}");
        let b = pattern(n);
        c.send_binary(&b).await.unwrap();
        assert_eq!(
            c.recv().await.unwrap(),
            Some(Message::Binary(&b)),
            "binary {n}"
        );
    }
    c.close(CloseCode::NORMAL, "done").await.unwrap();
    let echo = Some(CloseFrame {
        code: CloseCode::NORMAL,
        reason: "done",
    });
    assert_eq!(c.recv().await.unwrap(), Some(Message::Close(echo)));
    assert_eq!(c.recv().await.unwrap(), None);
}

/// Our fragments, tungstenite's fragments, pings both ways, tungstenite's close.
async fn fragments_ping_close<S, Tm>(c: &mut Client<S, Tm>)
where
    S: AsyncRead + AsyncWrite + Unpin,
    Tm: Timer,
{
    let t = text_of(10_000) + "€";
    c.send_text(&t).await.unwrap();
    assert_eq!(c.recv().await.unwrap(), Some(Message::Text(&t)));
    c.send_text("frag").await.unwrap();
    assert_eq!(c.recv().await.unwrap(), Some(Message::Text("hello wörld")));
    c.send_ping(b"cp").await.unwrap();
    assert_eq!(c.recv().await.unwrap(), Some(Message::Pong(b"cp")));
    c.send_text("ping").await.unwrap();
    assert_eq!(c.recv().await.unwrap(), Some(Message::Ping(b"tp")));
    c.send_text("close").await.unwrap();
    let close = Some(CloseFrame {
        code: CloseCode::GOING_AWAY,
        reason: "tungstenite bye",
    });
    assert_eq!(c.recv().await.unwrap(), Some(Message::Close(close)));
    assert_eq!(c.recv().await.unwrap(), None);
}

fn check_fragments_seen(seen: &[TMsg]) {
    assert!(
        seen.iter()
            .any(|m| matches!(m, TMsg::Pong(p) if &p[..] == b"tp")),
        "{seen:?}"
    );
    assert!(
        matches!(seen.last(), Some(TMsg::Close(Some(f))) if u16::from(f.code) == 1001),
        "{seen:?}"
    );
}

fn check_close_seen(seen: &[TMsg]) {
    assert!(
        matches!(seen.last(), Some(TMsg::Close(Some(f))) if u16::from(f.code) == 1000 && f.reason.as_str() == "done"),
        "{seen:?}"
    );
}

/// The async server's side against the tungstenite client: echo binaries, answer
/// "close" with a close 4001; the client's ping is answered automatically.
async fn serve_tungstenite<S, Tm>(mut s: ServerConnection<S, Tm>)
where
    S: AsyncRead + AsyncWrite + Unpin,
    Tm: Timer,
{
    s.handshake().await.unwrap();
    assert_eq!(s.path(), "/x");
    let mut scratch = Vec::new();
    let mut pings = 0;
    loop {
        match s.recv().await.unwrap() {
            None => break,
            Some(Message::Text("close")) => s.close(CloseCode(4001), "bye").await.unwrap(),
            Some(Message::Binary(b)) => {
                scratch.clear();
                scratch.extend_from_slice(b);
                s.send_binary(&scratch).await.unwrap();
            }
            Some(Message::Ping(_)) => pings += 1,
            Some(_) => {}
        }
    }
    assert_eq!(pings, 1);
}

#[test]
fn smol_client_to_tungstenite_server_data_and_close() {
    let (addr, h) = tungstenite_server();
    smol::block_on(async {
        let tcp = smol::net::TcpStream::connect(addr).await.unwrap();
        let mut c = client_builder::<smol::Timer>()
            .read_timeout(Some(T))
            .connect_with(tcp, &format!("ws://{addr}/"))
            .await
            .unwrap();
        data_and_close(&mut c).await;
    });
    check_close_seen(&h.join().unwrap());
}

#[test]
fn smol_client_to_tungstenite_server_fragments_ping_close() {
    let (addr, h) = tungstenite_server();
    smol::block_on(async {
        let tcp = smol::net::TcpStream::connect(addr).await.unwrap();
        let mut c = client_builder::<smol::Timer>()
            .read_timeout(Some(T))
            .fragment_size(1000)
            .connect_with(tcp, &format!("ws://{addr}/"))
            .await
            .unwrap();
        fragments_ping_close(&mut c).await;
    });
    check_fragments_seen(&h.join().unwrap());
}

#[test]
fn tungstenite_client_to_smol_server() {
    smol::block_on(async {
        let mut server = server_builder::<smol::Timer>()
            .read_timeout(Some(T))
            .bind("127.0.0.1:0")
            .unwrap();
        let client = tungstenite_client(server.local_addr().unwrap());
        serve_tungstenite(server.accept().await.unwrap()).await;
        assert!(
            smol::unblock(move || client.join().unwrap()).await,
            "tungstenite got our automatic pong"
        );
    });
}

/// The end of a nexus-async-rt test: its timer wheel keeps an entry (and its waker)
/// until its deadline even when the sleep is dropped, and the runtime insists that no
/// waker outlives it; sleep past the last deadline armed (the close timeout).
async fn settle() {
    nexus_util::sleep(Duration::from_secs(1)).await;
}

#[test]
fn nexus_client_to_tungstenite_server_data_and_close() {
    let (addr, h) = tungstenite_server();
    nexus_util::block_on(async move {
        let mut c = client_builder::<NexusTimer>()
            .connect_with(nexus_util::connect(addr), &format!("ws://{addr}/"))
            .await
            .unwrap();
        data_and_close(&mut c).await;
        drop(c);
        settle().await;
    });
    check_close_seen(&h.join().unwrap());
}

#[test]
fn nexus_client_to_tungstenite_server_fragments_ping_close() {
    let (addr, h) = tungstenite_server();
    nexus_util::block_on(async move {
        let mut c = client_builder::<NexusTimer>()
            .fragment_size(1000)
            .connect_with(nexus_util::connect(addr), &format!("ws://{addr}/"))
            .await
            .unwrap();
        fragments_ping_close(&mut c).await;
        drop(c);
        settle().await;
    });
    check_fragments_seen(&h.join().unwrap());
}

#[test]
fn tungstenite_client_to_nexus_server() {
    let pong = nexus_util::block_on(async {
        let mut listener =
            nexus_async_rt::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let client = tungstenite_client(listener.local_addr().unwrap());
        let (tcp, _) = listener.accept().await.unwrap();
        let s = server_builder::<NexusTimer>()
            .accept_stream(NexusTcp(tcp))
            .unwrap();
        serve_tungstenite(s).await;
        settle().await;
        client
    })
    .join()
    .unwrap();
    assert!(pong, "tungstenite got our automatic pong");
}
