//! Interop with tungstenite through the tokio adapter, over 127.0.0.1: a tungstenite
//! server (std thread) against the async tickwire client, and a tungstenite client
//! against the async tickwire server. Data of several sizes, fragments both ways,
//! ping/pong both ways, close from both ends.

mod tungstenite_peer;

use std::thread::JoinHandle;

use tickwire::tokio::ws::{Client, CloseCode, CloseFrame, Message, Server};
use tungstenite::Message as TMsg;

use tungstenite_peer::{SIZES, T, pattern, text_of, tungstenite_client, tungstenite_server};

async fn join<R: Send + 'static>(h: JoinHandle<R>) -> R {
    tokio::task::spawn_blocking(move || h.join().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_client_to_tungstenite_server_data_and_close() {
    let (addr, h) = tungstenite_server();
    let mut c = Client::builder()
        .read_timeout(Some(T))
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .connect(&format!("ws://{addr}/"))
        .await
        .unwrap();
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
    let seen = join(h).await;
    assert!(
        matches!(seen.last(), Some(TMsg::Close(Some(f))) if u16::from(f.code) == 1000 && f.reason.as_str() == "done")
    );
}

#[tokio::test]
async fn async_client_to_tungstenite_server_fragments_ping_close() {
    let (addr, h) = tungstenite_server();
    let mut c = Client::builder()
        .read_timeout(Some(T))
        .fragment_size(1000)
        .connect(&format!("ws://{addr}/"))
        .await
        .unwrap();
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
    let seen = join(h).await;
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

#[tokio::test]
async fn tungstenite_client_to_async_server() {
    let mut server = Server::builder()
        .read_timeout(Some(T))
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let client = tungstenite_client(addr);
    let mut s = server.accept().await.unwrap();
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
    assert!(join(client).await, "tungstenite got our automatic pong");
}
