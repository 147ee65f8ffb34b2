//! Interop with tungstenite through the tokio adapter, over 127.0.0.1: a tungstenite
//! server (std thread) against the async tickwire client, and a tungstenite client
//! against the async tickwire server. Data of several sizes, fragments both ways,
//! ping/pong both ways, close from both ends.

use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tickwire::tokio::ws::{Client, CloseCode, CloseFrame, Message, Server};
use tungstenite::Message as TMsg;
use tungstenite::protocol::CloseFrame as TClose;
use tungstenite::protocol::frame::Frame;
use tungstenite::protocol::frame::coding::{CloseCode as TCode, Data, OpCode};

const T: Duration = Duration::from_secs(20);
const SIZES: [usize; 8] = [0, 1, 125, 126, 65_535, 65_536, 300_000, 1 << 20];

fn text_of(n: usize) -> String {
    (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect()
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 253) as u8).collect()
}

/// A tungstenite server: echoes data; "frag" is answered by a fragmented text message,
/// "ping" by a ping, "close" by a close with code 1001.
fn tungstenite_server() -> (SocketAddr, JoinHandle<Vec<TMsg>>) {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let h = thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        let mut ws = tungstenite::accept(s).unwrap();
        let mut seen = Vec::new();
        loop {
            let msg = match ws.read() {
                Ok(m) => m,
                Err(tungstenite::Error::ConnectionClosed) => return seen,
                Err(e) => panic!("tungstenite server: {e}"),
            };
            match &msg {
                TMsg::Text(t) if t.as_str() == "frag" => {
                    let parts: [(&[u8], OpCode, bool); 3] = [
                        (b"hel", OpCode::Data(Data::Text), false),
                        (b"lo ", OpCode::Data(Data::Continue), false),
                        ("wörld".as_bytes(), OpCode::Data(Data::Continue), true),
                    ];
                    for (p, op, fin) in parts {
                        ws.send(TMsg::Frame(Frame::message(p.to_vec(), op, fin)))
                            .unwrap();
                    }
                }
                TMsg::Text(t) if t.as_str() == "ping" => {
                    ws.send(TMsg::Ping(b"tp".to_vec().into())).unwrap()
                }
                TMsg::Text(t) if t.as_str() == "close" => ws
                    .close(Some(TClose {
                        code: TCode::Away,
                        reason: "tungstenite bye".into(),
                    }))
                    .unwrap(),
                TMsg::Text(_) | TMsg::Binary(_) => ws.send(msg.clone()).unwrap(),
                _ => {}
            }
            seen.push(msg);
        }
    });
    (addr, h)
}

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
    let client = thread::spawn(move || {
        let s = StdStream::connect(addr).unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        let (mut ws, _) = tungstenite::client(format!("ws://{addr}/x"), s).unwrap();
        for n in SIZES {
            let b = pattern(n);
            ws.send(TMsg::Binary(b.clone().into())).unwrap();
            match ws.read().unwrap() {
                TMsg::Binary(got) => assert_eq!(&got[..], &b[..], "binary {n}"),
                other => panic!("{other:?}"),
            }
        }
        ws.send(TMsg::Ping(b"p1".to_vec().into())).unwrap();
        ws.send(TMsg::Text("close".into())).unwrap();
        let mut pong = false;
        loop {
            match ws.read() {
                Ok(TMsg::Pong(p)) => pong |= &p[..] == b"p1",
                Ok(TMsg::Close(Some(f))) => assert_eq!(u16::from(f.code), 4001),
                Ok(_) => {}
                Err(tungstenite::Error::ConnectionClosed) => break,
                Err(e) => panic!("tungstenite client: {e}"),
            }
        }
        pong
    });
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
