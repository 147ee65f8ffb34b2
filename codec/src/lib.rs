//! tickwire-codec: a sans-IO, `#![no_std]`, zero-copy WebSocket and HTTP/1.1 codec.
//!
//! Bytes in, events out. The codec never performs I/O, never allocates on the
//! hot path and never panics on input: every input ends in a value or a typed
//! error. Buffers belong to the caller (see [`buf`]).
//!
//! Features:
//! - `alloc`: owned message types ([`ws::OwnedMessage`]) and [`ws::PreparedMessage`] (one
//!   frame sent to many connections).
//! - `getrandom`: seed the masking-key generator from the operating system.
//! - `tls`: the TLS codec over rustls's unbuffered API ([`tls`]; implies `alloc`).
//! - `deflate`: permessage-deflate, RFC 7692 (`ws::deflate`; implies `alloc`; no std:
//!   zlib-rs allocates through the codec's `alloc::alloc` hooks).
//! - `deflate-std`: `deflate` with zlib-rs's run-time CPU detection (its AVX2 paths,
//!   `is_x86_feature_detected!`), which needs std; the transport's `deflate` turns it on.
//! - `json`: [`RestResponse::json`](http::RestResponse::json), a response body deserialized
//!   with serde_json, borrowing from the body (implies `alloc`).
//!
//! # A frame round trip
//!
//! A client writer masks a text message into a [`WriteBuf`](buf::WriteBuf); a server
//! reader takes the bytes and hands the message back, borrowed from its own buffer.
//!
//! ```
//! use tickwire_codec::buf::WriteBuf;
//! use tickwire_codec::rand::MaskRng;
//! use tickwire_codec::ws::{FrameReader, FrameWriter, Message, Role};
//!
//! let mut writer = FrameWriter::client(MaskRng::from_seed([7; 32]));
//! let mut out = WriteBuf::new([0u8; 256]);
//! writer.write_text("hello", &mut out).unwrap();
//!
//! let mut reader = FrameReader::new(Role::Server, [0u8; 256]);
//! assert_eq!(reader.feed(out.data()), out.data().len());
//! assert_eq!(reader.next().unwrap(), Some(Message::Text("hello")));
//! assert_eq!(reader.next().unwrap(), None); // needs more bytes
//! ```
//!
//! # A connection pair
//!
//! [`ws::Connection`] is the whole WebSocket state machine (opening handshake, pongs,
//! close handshake, timeouts) with time passed in. Two of them, a client and a server,
//! talk through a function that plays the socket. The codec's default limits
//! ([`ws::Config::default`]) are 16 MiB per frame and per message, and a message must
//! also fit the read buffer the caller hands in (the `tickwire` transport's default is
//! 1 MiB).
//!
//! ```
//! use tickwire_codec::rand::MaskRng;
//! use tickwire_codec::time::Instant;
//! use tickwire_codec::ws::handshake::ClientHandshake;
//! use tickwire_codec::ws::{Connection, Masking, Message, Settings};
//!
//! type Conn<M> = Connection<Vec<u8>, Vec<u8>, M>;
//!
//! /// What `from` has to send, read by `to` (a socket would sit in between).
//! fn pump<A: Masking, B: Masking>(from: &mut Conn<A>, to: &mut Conn<B>) {
//!     let n = from.transmit().len().min(to.read_buf().len());
//!     to.read_buf()[..n].copy_from_slice(&from.transmit()[..n]);
//!     to.handle_read(n);
//!     from.handle_written(n);
//! }
//!
//! let now = Instant::from_nanos(0);
//! let settings = Settings::default();
//! let hs = ClientHandshake::new("example.com", "/feed", [7; 16]);
//! let rng = MaskRng::from_seed([1; 32]);
//! let mut client = Connection::client(&hs, vec![0; 4096], vec![0; 4096], rng, &settings, now)
//!     .unwrap();
//! let mut server = Connection::server(vec![0; 4096], vec![0; 4096], &settings, now);
//!
//! pump(&mut client, &mut server); // the upgrade request
//! assert!(server.handle_upgrade(|_request| Default::default()).unwrap());
//! pump(&mut server, &mut client); // 101 Switching Protocols
//! assert!(client.poll_message().unwrap().is_none());
//!
//! client.send_text("hello").unwrap();
//! pump(&mut client, &mut server);
//! assert_eq!(server.poll_message().unwrap(), Some(Message::Text("hello")));
//! ```
//!
//! # An echo without a copy
//!
//! The reply is queued while the received message still borrows the reader: the
//! connection lends its sending half beside the message.
//!
//! ```
//! # use tickwire_codec::ws::connection::{doc_pair, doc_pump};
//! # let (mut client, mut server) = doc_pair(); // two opened connections, as above
//! use tickwire_codec::ws::Message;
//!
//! client.send_text("hello").unwrap();
//! doc_pump(&mut client, &mut server);
//! if let Some((msg, tx)) = server.poll_message_with_sender().unwrap() {
//!     match msg {
//!         Message::Text(t) => tx.send_text(t).unwrap(),
//!         Message::Binary(b) => tx.send_binary(b).unwrap(),
//!         _ => {} // pings are answered, a close is echoed, by the connection
//!     }
//! }
//! doc_pump(&mut server, &mut client);
//! assert_eq!(client.poll_message().unwrap(), Some(Message::Text("hello")));
//! ```
//!
//! # A REST request and its response
//!
//! [`http::RequestWriter`] builds a request in the caller's storage (GET, or POST with a
//! JSON body, each one expression), [`http::ResponseReader`] parses the answer in place.
//!
//! ```
//! use tickwire_codec::http::{RequestWriter, ResponseReader};
//!
//! let mut w = RequestWriter::new([0u8; 1024], "api.exchange.example").unwrap();
//! let get = w.get("/api/v3/time").finish().unwrap();
//! assert!(get.as_bytes().starts_with(b"GET /api/v3/time HTTP/1.1\r\n"));
//! let post = w.post("/api/v3/order").json_bytes(br#"{"qty":"0.01"}"#).finish().unwrap();
//! assert!(post.as_bytes().ends_with(br#"{"qty":"0.01"}"#));
//!
//! let mut r: ResponseReader<[u8; 1024]> = ResponseReader::new([0u8; 1024]);
//! r.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"id\":\"4711\"}");
//! let resp = r.poll().unwrap().unwrap(); // borrowed from the reader's storage
//! assert_eq!((resp.status(), resp.body_str().unwrap()), (200, r#"{"id":"4711"}"#));
//! ```
//!
//! Sockets, a blocking and a tokio API, `wss://` and `https://` (with a private CA) are
//! the `tickwire` crate's: its front page has the same examples over 127.0.0.1.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;

#[cfg(test)]
extern crate std;

pub mod buf;
pub mod http;
pub mod rand;
pub mod simd;
pub mod time;
#[cfg(feature = "tls")]
pub mod tls;
pub mod ws;
