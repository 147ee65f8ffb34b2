//! Interop with tungstenite over 127.0.0.1: a tungstenite server (std thread, std
//! listener) against the tickwire client, and a tungstenite client against the
//! tickwire server. Text and binary of several sizes, fragmented messages, ping/pong
//! and close codes.

use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tickwire::ws::{Client, CloseCode, CloseFrame, Message, Server, ServerConnection};
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

type TServer = tungstenite::WebSocket<StdStream>;

/// A tungstenite server: echoes data; "frag" is answered by a fragmented text message,
/// "ping" by a ping, "close" by a close with code 1001.
fn tungstenite_server() -> (SocketAddr, JoinHandle<Vec<TMsg>>) {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let h = thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        let mut ws: TServer = tungstenite::accept(s).unwrap();
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

fn client(addr: SocketAddr) -> Client {
    Client::builder()
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .connect(&format!("ws://{addr}/"))
        .unwrap()
}

#[test]
fn tickwire_client_to_tungstenite_server_data() {
    let (addr, h) = tungstenite_server();
    let mut c = client(addr);
    for n in SIZES {
        let t = text_of(n);
        c.send_text(&t).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Text(&t)), "text {n}");
        let b = pattern(n);
        c.send_binary(&b).unwrap();
        assert_eq!(c.recv().unwrap(), Some(Message::Binary(&b)), "binary {n}");
    }
    c.close(CloseCode::NORMAL, "done").unwrap();
    let echo = Some(CloseFrame {
        code: CloseCode::NORMAL,
        reason: "done",
    });
    assert_eq!(c.recv().unwrap(), Some(Message::Close(echo)));
    assert_eq!(c.recv().unwrap(), None);
    let seen = h.join().unwrap();
    assert!(
        matches!(seen.last(), Some(TMsg::Close(Some(f))) if u16::from(f.code) == 1000 && f.reason.as_str() == "done")
    );
}

#[test]
fn tickwire_client_to_tungstenite_server_fragments_ping_close() {
    let (addr, h) = tungstenite_server();
    let mut c = Client::builder()
        .read_timeout(Some(T))
        .fragment_size(1000)
        .connect(&format!("ws://{addr}/"))
        .unwrap();
    // Our fragmented message is reassembled by tungstenite and echoed whole.
    let t = text_of(10_000) + "€";
    c.send_text(&t).unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Text(&t)));
    // Tungstenite's fragmented message is reassembled by us.
    c.send_text("frag").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Text("hello wörld")));
    // Our ping is answered by tungstenite.
    c.send_ping(b"cp").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Pong(b"cp")));
    // Tungstenite's ping is answered by us (it records the pong).
    c.send_text("ping").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Ping(b"tp")));
    // Tungstenite closes with 1001; we echo it.
    c.send_text("close").unwrap();
    let close = Some(CloseFrame {
        code: CloseCode::GOING_AWAY,
        reason: "tungstenite bye",
    });
    assert_eq!(c.recv().unwrap(), Some(Message::Close(close)));
    assert_eq!(c.recv().unwrap(), None);
    let seen = h.join().unwrap();
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

/// A tickwire server that echoes data and answers "close" with a close of code 4001.
fn tickwire_server() -> (SocketAddr, JoinHandle<Vec<String>>) {
    let mut server = Server::builder()
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || serve_one(server.accept().unwrap()));
    (addr, h)
}

/// Echo; log control messages as strings; return the log when the connection ends.
fn serve_one(mut s: ServerConnection) -> Vec<String> {
    let mut log = Vec::new();
    let mut scratch = Vec::new();
    loop {
        let text = match s.recv().unwrap() {
            None => return log,
            Some(Message::Text("close")) => {
                s.close(CloseCode(4001), "tickwire bye").unwrap();
                continue;
            }
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
            Some(other) => {
                log.push(format!("{other:?}"));
                continue;
            }
        };
        if text {
            s.send_text(std::str::from_utf8(&scratch).unwrap()).unwrap();
        } else {
            s.send_binary(&scratch).unwrap();
        }
    }
}

type TClient = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<StdStream>>;

fn tungstenite_client(addr: SocketAddr) -> TClient {
    let (ws, resp) = tungstenite::connect(format!("ws://{addr}/interop")).unwrap();
    assert_eq!(resp.status().as_u16(), 101);
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(T)).unwrap();
    }
    ws
}

/// The next data or pong message (tungstenite also hands us pings it answered).
fn next(ws: &mut TClient) -> TMsg {
    loop {
        match ws.read().unwrap() {
            TMsg::Ping(_) => continue,
            m => return m,
        }
    }
}

#[test]
fn tungstenite_client_to_tickwire_server_data_and_client_close() {
    let (addr, h) = tickwire_server();
    let mut ws = tungstenite_client(addr);
    for n in SIZES {
        let t = text_of(n);
        ws.send(TMsg::text(t.clone())).unwrap();
        assert_eq!(next(&mut ws), TMsg::text(t), "text {n}");
        let b = pattern(n);
        ws.send(TMsg::binary(b.clone())).unwrap();
        assert_eq!(next(&mut ws), TMsg::binary(b), "binary {n}");
    }
    ws.close(Some(TClose {
        code: TCode::from(4500),
        reason: "client bye".into(),
    }))
    .unwrap();
    match ws.read() {
        Ok(TMsg::Close(Some(f))) => assert_eq!(u16::from(f.code), 4500),
        other => panic!("{other:?}"),
    }
    let log = h.join().unwrap();
    assert_eq!(
        log,
        [r#"Close(Some(CloseFrame { code: CloseCode(4500), reason: "client bye" }))"#]
    );
}

#[test]
fn tungstenite_client_to_tickwire_server_fragments_ping_close() {
    let (addr, h) = tickwire_server();
    let mut ws = tungstenite_client(addr);
    // A fragmented text message from tungstenite, with a ping between fragments.
    let frames = [
        Frame::message(b"ab".to_vec(), OpCode::Data(Data::Text), false),
        Frame::ping(b"mid".to_vec()),
        Frame::message(
            "cdé".as_bytes().to_vec(),
            OpCode::Data(Data::Continue),
            false,
        ),
        Frame::message(b"f".to_vec(), OpCode::Data(Data::Continue), true),
    ];
    for f in frames {
        ws.send(TMsg::Frame(f)).unwrap();
    }
    assert_eq!(ws.read().unwrap(), TMsg::Pong(b"mid".to_vec().into()));
    assert_eq!(next(&mut ws), TMsg::text("abcdéf"));
    // A fragmented binary message.
    let b = pattern(70_000);
    let (x, y) = b.split_at(40_000);
    ws.send(TMsg::Frame(Frame::message(
        x.to_vec(),
        OpCode::Data(Data::Binary),
        false,
    )))
    .unwrap();
    ws.send(TMsg::Frame(Frame::message(
        y.to_vec(),
        OpCode::Data(Data::Continue),
        true,
    )))
    .unwrap();
    assert_eq!(next(&mut ws), TMsg::binary(b));
    // The tickwire server closes with 4001; tungstenite echoes it.
    ws.send(TMsg::text("close")).unwrap();
    match ws.read() {
        Ok(TMsg::Close(Some(f))) => {
            assert_eq!(u16::from(f.code), 4001);
            assert_eq!(f.reason.as_str(), "tickwire bye");
        }
        other => panic!("{other:?}"),
    }
    // Tungstenite's echo completes the handshake on the server side.
    match ws.read() {
        Err(tungstenite::Error::ConnectionClosed) => {}
        other => panic!("{other:?}"),
    }
    let log = h.join().unwrap();
    assert_eq!(log[0], r#"Ping([109, 105, 100])"#);
    assert!(
        log[1].starts_with("Close(Some(CloseFrame { code: CloseCode(4001)"),
        "{log:?}"
    );
}
