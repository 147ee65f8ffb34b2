//! The tungstenite peer of the async interop tests (tokio and futures-io): a server on
//! a std thread, and the data the tests send through it.
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tungstenite::Message as TMsg;
use tungstenite::protocol::CloseFrame as TClose;
use tungstenite::protocol::frame::Frame;
use tungstenite::protocol::frame::coding::{CloseCode as TCode, Data, OpCode};

pub const T: Duration = Duration::from_secs(20);
pub const SIZES: [usize; 8] = [0, 1, 125, 126, 65_535, 65_536, 300_000, 1 << 20];

pub fn text_of(n: usize) -> String {
    (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect()
}

pub fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 253) as u8).collect()
}

/// A tungstenite server: echoes data; "frag" is answered by a fragmented text message,
/// "ping" by a ping, "close" by a close with code 1001.
pub fn tungstenite_server() -> (SocketAddr, JoinHandle<Vec<TMsg>>) {
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

/// A tungstenite client of the server at `addr` (path `/x`): binary messages of every
/// size, each echo checked; a ping, then "close", answered by the server's close 4001.
/// Returns whether the server's automatic pong came back.
pub fn tungstenite_client(addr: SocketAddr) -> JoinHandle<bool> {
    thread::spawn(move || {
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
    })
}
