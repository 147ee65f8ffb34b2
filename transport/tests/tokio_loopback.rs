//! The tokio adapter, async client <-> async server over 127.0.0.1: the blocking
//! suite's key behaviours (sizes, fragmentation, auto-pong, both close initiators,
//! close timeout, protocol errors and limits, backpressure), cancellation safety of
//! `recv` inside `tokio::select!`, and both runtimes (`current_thread` + `LocalSet`,
//! multi-thread).
#![cfg(all(feature = "tokio", unix))]

mod net_events;
mod ws_util;

use std::future::Future;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::rc::Rc;
use std::time::Duration;

use tickwire::codec::ws::handshake;
use tickwire::tokio::ws::{
    Client, ClientBuilder, CloseCode, CloseFrame, Error, Message, Server, ServerBuilder,
    ServerConnection,
};
use tickwire::ws::ProtocolError;
use tokio::task::JoinHandle;
use ws_util::{pattern, raw_client, text_of};

const T: Duration = Duration::from_secs(20);

fn server_builder() -> ServerBuilder {
    Server::builder()
        .read_timeout(Some(T))
        .write_timeout(Some(T))
}

fn client_builder() -> ClientBuilder {
    Client::builder()
        .read_timeout(Some(T))
        .write_timeout(Some(T))
}

/// A server on 127.0.0.1:0 that accepts one connection and hands it to `f`.
async fn serve<F, Fut>(builder: ServerBuilder, f: F) -> (SocketAddr, JoinHandle<()>)
where
    F: FnOnce(ServerConnection) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut server = builder.bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let h = tokio::spawn(async move {
        let mut conn = server.accept().await.unwrap();
        conn.handshake().await.unwrap();
        f(conn).await
    });
    (addr, h)
}

fn url(addr: SocketAddr) -> String {
    format!("ws://{addr}/test")
}

/// Echo text and binary until the close handshake completes.
async fn echo(mut c: ServerConnection) {
    while let Some(()) = c
        .recv_with(|msg, tx| match msg {
            Message::Text(t) => tx.send_text(t),
            Message::Binary(b) => tx.send_binary(b),
            _ => Ok(()),
        })
        .await
        .unwrap()
    {}
}

/// Room for the largest of `SIZES` (1 MiB) plus its header.
fn big_server() -> ServerBuilder {
    server_builder()
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
}

fn big_client() -> ClientBuilder {
    client_builder()
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
}

const SIZES: [usize; 9] = [0, 1, 125, 126, 127, 65_535, 65_536, 300_000, 1 << 20];

/// Echo every size as text and binary, then close from the client.
async fn round_trip(cb: ClientBuilder, sb: ServerBuilder) {
    let (addr, h) = serve(sb, echo).await;
    let mut c = cb.connect(&url(addr)).await.unwrap();
    for n in SIZES {
        let text = text_of(n);
        c.send_text(&text).await.unwrap();
        match c.recv().await.unwrap() {
            Some(Message::Text(t)) => assert_eq!(t, text, "text of {n}"),
            other => panic!("expected text of {n}, got {other:?}"),
        }
        let bin = pattern(n);
        c.send_binary(&bin).await.unwrap();
        match c.recv().await.unwrap() {
            Some(Message::Binary(b)) => assert_eq!(b, &bin[..], "binary of {n}"),
            other => panic!("expected binary of {n}, got {other:?}"),
        }
    }
    c.close(CloseCode::NORMAL, "done").await.unwrap();
    assert!(matches!(c.recv().await.unwrap(), Some(Message::Close(_))));
    assert!(c.recv().await.unwrap().is_none());
    assert!(c.is_closed());
    h.await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn text_and_binary_of_many_sizes_round_trip_current_thread() {
    round_trip(big_client(), big_server()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_and_binary_of_many_sizes_round_trip_multi_thread() {
    // The client moves to another task (and thread) after connecting.
    let (addr, h) = serve(big_server(), echo).await;
    let mut c = big_client().connect(&url(addr)).await.unwrap();
    let task = tokio::spawn(async move {
        for n in SIZES {
            let bin = pattern(n);
            c.send_binary(&bin).await.unwrap();
            match c.recv().await.unwrap() {
                Some(Message::Binary(b)) => assert_eq!(b, &bin[..]),
                other => panic!("expected binary of {n}, got {other:?}"),
            }
        }
        c.close(CloseCode::NORMAL, "").await.unwrap();
        while c.recv().await.unwrap().is_some() {}
    });
    task.await.unwrap();
    h.await.unwrap();
}

#[test]
fn current_thread_local_set_needs_no_send() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let mut server = server_builder().bind("127.0.0.1:0").await.unwrap();
        let addr = server.local_addr().unwrap();
        // Non-Send state (an Rc) held across awaits in both tasks.
        let seen = Rc::new(std::cell::Cell::new(0usize));
        let s_seen = seen.clone();
        let s = tokio::task::spawn_local(async move {
            let mut conn = server.accept().await.unwrap();
            while let Some(msg) = conn.recv().await.unwrap() {
                if let Message::Text(t) = msg {
                    s_seen.set(s_seen.get() + t.len());
                    let reply = t.to_uppercase();
                    conn.send_text(&reply).await.unwrap();
                }
            }
        });
        let c = tokio::task::spawn_local(async move {
            let mut c = client_builder().connect(&url(addr)).await.unwrap();
            for word in ["tick", "wire", "local"] {
                c.send_text(word).await.unwrap();
                match c.recv().await.unwrap() {
                    Some(Message::Text(t)) => assert_eq!(t, word.to_uppercase()),
                    other => panic!("{other:?}"),
                }
            }
            c.close(CloseCode::NORMAL, "").await.unwrap();
            while c.recv().await.unwrap().is_some() {}
        });
        c.await.unwrap();
        s.await.unwrap();
        assert_eq!(seen.get(), 13);
    });
}

#[test]
fn connections_and_futures_are_send() {
    fn send<T: Send>(_: &T) {}
    fn is_send<T: Send>() {}
    is_send::<Client>();
    is_send::<Server>();
    is_send::<ServerConnection>();
    is_send::<tickwire::tokio::ws::ReadHalf<tickwire::ws::Client>>();
    is_send::<tickwire::tokio::ws::WriteHalf<tickwire::ws::ServerConnection>>();
    // The futures too (checked without running them).
    let _ = |c: &mut Client, s: &mut ServerConnection| {
        send(&c.recv());
        send(&c.send_text("x"));
        send(&s.recv());
        send(&s.close(CloseCode::NORMAL, ""));
    };
}

#[tokio::test]
async fn fragmented_messages_both_ways() {
    let (addr, h) = serve(server_builder().fragment_size(1000), echo).await;
    let mut c = client_builder()
        .fragment_size(777)
        .connect(&url(addr))
        .await
        .unwrap();
    let text = text_of(10_000);
    c.send_text(&text).await.unwrap();
    match c.recv().await.unwrap() {
        Some(Message::Text(t)) => assert_eq!(t, text),
        other => panic!("{other:?}"),
    }
    let bin = pattern(5_001);
    c.send_binary(&bin).await.unwrap();
    match c.recv().await.unwrap() {
        Some(Message::Binary(b)) => assert_eq!(b, &bin[..]),
        other => panic!("{other:?}"),
    }
    c.close(CloseCode::NORMAL, "").await.unwrap();
    while c.recv().await.unwrap().is_some() {}
    h.await.unwrap();
}

#[tokio::test]
async fn ping_is_answered_automatically_and_observed() {
    let (addr, h) = serve(server_builder(), |mut s| async move {
        match s.recv().await.unwrap() {
            Some(Message::Ping(p)) => assert_eq!(p, b"are you there"),
            other => panic!("{other:?}"),
        }
        // The pong went out before the ping was returned; now close.
        s.close(CloseCode::GOING_AWAY, "bye").await.unwrap();
        while s.recv().await.unwrap().is_some() {}
    })
    .await;
    let mut c = client_builder().connect(&url(addr)).await.unwrap();
    c.send_ping(b"are you there").await.unwrap();
    match c.recv().await.unwrap() {
        Some(Message::Pong(p)) => assert_eq!(p, b"are you there"),
        other => panic!("{other:?}"),
    }
    match c.recv().await.unwrap() {
        Some(Message::Close(Some(CloseFrame { code, reason }))) => {
            assert_eq!(code, CloseCode::GOING_AWAY);
            assert_eq!(reason, "bye");
        }
        other => panic!("{other:?}"),
    }
    assert!(c.recv().await.unwrap().is_none());
    h.await.unwrap();
}

#[tokio::test]
async fn client_initiated_close_echoes_the_code() {
    let (addr, h) = serve(server_builder(), |mut s| async move {
        match s.recv().await.unwrap() {
            Some(Message::Close(Some(f))) => {
                assert_eq!(f.code, CloseCode::NORMAL);
                assert_eq!(f.reason, "client done");
            }
            other => panic!("{other:?}"),
        }
        assert!(s.recv().await.unwrap().is_none());
        assert!(s.is_closed());
        assert!(matches!(
            s.send_text("late").await,
            Err(Error::AlreadyClosed)
        ));
    })
    .await;
    let mut c = client_builder().connect(&url(addr)).await.unwrap();
    c.close(CloseCode::NORMAL, "client done").await.unwrap();
    match c.recv().await.unwrap() {
        Some(Message::Close(Some(f))) => assert_eq!(f.code, CloseCode::NORMAL),
        other => panic!("{other:?}"),
    }
    assert!(c.recv().await.unwrap().is_none());
    h.await.unwrap();
}

#[tokio::test]
async fn server_initiated_close_discards_late_data() {
    let (addr, h) = serve(server_builder(), |mut s| async move {
        s.close(CloseCode::GOING_AWAY, "maintenance").await.unwrap();
        // Data the client sent before seeing our close is discarded; then its close.
        match s.recv().await.unwrap() {
            Some(Message::Close(Some(f))) => assert_eq!(f.code, CloseCode::GOING_AWAY),
            other => panic!("{other:?}"),
        }
        assert!(s.recv().await.unwrap().is_none());
    })
    .await;
    let mut c = client_builder().connect(&url(addr)).await.unwrap();
    c.send_text("late 1").await.unwrap();
    c.send_text("late 2").await.unwrap();
    match c.recv().await.unwrap() {
        Some(Message::Close(Some(f))) => {
            assert_eq!(f.code, CloseCode::GOING_AWAY);
            assert_eq!(f.reason, "maintenance");
        }
        other => panic!("{other:?}"),
    }
    assert!(c.recv().await.unwrap().is_none());
    h.await.unwrap();
}

#[tokio::test]
async fn close_timeout_when_the_peer_never_answers() {
    // The server holds the connection without reading it until the client has timed
    // out (an event: a server that slept a while could close first on a loaded machine).
    let (done, wait) = tokio::sync::oneshot::channel::<()>();
    let (addr, h) = serve(server_builder(), |s| async move {
        let _ = wait.await;
        drop(s);
    })
    .await;
    let mut c = client_builder()
        .close_timeout(Duration::from_millis(200))
        .connect(&url(addr))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    c.close(CloseCode::NORMAL, "").await.unwrap();
    assert!(matches!(c.recv().await, Err(Error::CloseTimeout)));
    // Not before the close timeout (how long after it depends on the machine).
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(c.is_closed());
    done.send(()).unwrap();
    h.await.unwrap();
}

#[tokio::test]
async fn read_timeout_leaves_the_connection_usable() {
    // The server sends once the client's first read has timed out (an event).
    let (timed_out, wait) = tokio::sync::oneshot::channel::<()>();
    let (addr, h) = serve(server_builder(), |mut s| async move {
        wait.await.unwrap();
        s.send_text("late but fine").await.unwrap();
        while s.recv().await.unwrap().is_some() {}
    })
    .await;
    let mut c = client_builder()
        .read_timeout(Some(Duration::from_millis(50)))
        .connect(&url(addr))
        .await
        .unwrap();
    assert!(matches!(c.recv().await, Err(Error::ReadTimeout)));
    timed_out.send(()).unwrap();
    let mut got = None;
    for _ in 0..100 {
        match c.recv().await {
            Err(Error::ReadTimeout) => continue,
            Ok(Some(Message::Text(t))) => {
                got = Some(t.to_owned());
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(got.as_deref(), Some("late but fine"));
    c.close(CloseCode::NORMAL, "").await.unwrap();
    while c.recv().await.unwrap().is_some() {}
    h.await.unwrap();
}

#[tokio::test]
async fn backpressure_waits_for_room_and_loses_nothing() {
    // A write buffer of 64 KiB, 200 messages of 40 KiB, a reader that starts late:
    // sends await room instead of failing, and everything arrives in order.
    const N: usize = 200;
    let (addr, h) = serve(server_builder(), |mut s| async move {
        // Start reading once the client's bytes wait in its socket (the socket is full).
        let (ours, theirs) = (s.local_addr().unwrap(), s.peer_addr().unwrap());
        let deadline = std::time::Instant::now() + T;
        while net_events::tcp(theirs, Some(ours)).is_none_or(|t| t.tx == 0) {
            assert!(
                std::time::Instant::now() < deadline,
                "the client never backed up"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        for i in 0..N {
            match s.recv().await.unwrap() {
                Some(Message::Binary(b)) => {
                    assert_eq!(b.len(), 40 << 10);
                    assert!(b.iter().all(|&x| x == i as u8), "message {i}");
                }
                other => panic!("{other:?}"),
            }
        }
        while s.recv().await.unwrap().is_some() {}
    })
    .await;
    let mut c = client_builder()
        .write_buffer_size(64 << 10)
        .connect(&url(addr))
        .await
        .unwrap();
    for i in 0..N {
        c.send_binary(&vec![i as u8; 40 << 10]).await.unwrap();
    }
    c.close(CloseCode::NORMAL, "").await.unwrap();
    while c.recv().await.unwrap().is_some() {}
    h.await.unwrap();
}

#[tokio::test]
async fn a_message_larger_than_the_write_buffer_is_refused() {
    let (addr, h) = serve(server_builder(), echo).await;
    let mut c = client_builder()
        .write_buffer_size(1000)
        .connect(&url(addr))
        .await
        .unwrap();
    assert!(matches!(
        c.send_binary(&[0u8; 2000]).await,
        Err(Error::MessageTooLarge { .. })
    ));
    assert!(matches!(
        c.send_ping(&[0u8; 200]).await,
        Err(Error::Encode(_))
    ));
    c.close(CloseCode::NORMAL, "").await.unwrap();
    while c.recv().await.unwrap().is_some() {}
    h.await.unwrap();
}

/// A raw WebSocket server on a std thread: accepts one connection, answers the
/// handshake through the codec, then runs `f` on the socket.
fn raw_server<F>(f: F) -> (SocketAddr, std::thread::JoinHandle<()>)
where
    F: FnOnce(StdStream) + Send + 'static,
{
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(s.read(&mut byte).unwrap(), 1);
            head.push(byte[0]);
        }
        let req = handshake::parse_request(&head).unwrap().unwrap();
        let mut out = [0u8; 512];
        let n = handshake::write_accept(&req, None, &[], &mut out).unwrap();
        s.write_all(&out[..n]).unwrap();
        f(s)
    });
    (addr, h)
}

#[tokio::test]
async fn recv_is_cancellation_safe_in_select() {
    // Two binary messages, each trickled in pieces (a split header, then the payload in
    // thirds) with a pause after each piece until the select! timer has won.
    let payload: Vec<u8> = pattern(30_000);
    let frame = {
        let mut f = vec![0x82, 126, (30_000u16 >> 8) as u8, 30_000u16 as u8];
        f.extend_from_slice(&payload);
        f
    };
    let pieces = [0..1, 1..4, 4..10_004, 10_004..20_004, 20_004..frame.len()];
    // After each piece the server waits for a timer win of the client (an event, sent
    // on `tick`), not for a time the client may or may not get to run in.
    let (tick, ticked) = std::sync::mpsc::channel::<()>();
    let (addr, h) = raw_server({
        let frame = frame.clone();
        move |mut s| {
            for _ in 0..2 {
                for r in pieces.clone() {
                    s.write_all(&frame[r]).unwrap();
                    s.flush().unwrap();
                    while ticked.try_recv().is_ok() {}
                    ticked.recv_timeout(T).unwrap();
                }
            }
            // Close 1000, unmasked (server to client).
            s.write_all(&[0x88, 0x02, 0x03, 0xE8]).unwrap();
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
        }
    });
    let mut c = client_builder().connect(&url(addr)).await.unwrap();
    let mut ticks = 0;
    let mut got = 0;
    loop {
        tokio::select! {
            m = c.recv() => match m.unwrap() {
                Some(Message::Binary(b)) => {
                    assert_eq!(b, &payload[..], "message {got} intact");
                    got += 1;
                }
                Some(Message::Close(Some(f))) => {
                    assert_eq!(f.code, CloseCode::NORMAL);
                    break;
                }
                other => panic!("{other:?}"),
            },
            _ = tokio::time::sleep(Duration::from_millis(40)) => {
                ticks += 1;
                let _ = tick.send(());
            }
        }
    }
    assert_eq!(got, 2);
    // The timer won many times while messages were half-received.
    assert!(ticks >= 10, "only {ticks} timer wins");
    assert!(c.recv().await.unwrap().is_none());
    h.join().unwrap();
}

#[tokio::test]
async fn protocol_error_gets_a_1002_close() {
    let (addr, h) = serve(server_builder(), |mut s| async move {
        let err = s.recv().await.unwrap_err();
        assert!(
            matches!(err, Error::Protocol(ProtocolError::ReservedOpcode(3))),
            "{err:?}"
        );
        // Later calls report what failed the connection.
        assert!(matches!(
            s.recv().await,
            Err(Error::Protocol(ProtocolError::ReservedOpcode(3)))
        ));
    })
    .await;
    // Masked frame with reserved opcode 3.
    let out = tokio::task::spawn_blocking(move || {
        raw_client(addr, &[0x83, 0x80, 1, 2, 3, 4, 0xde, 0xad], T)
    })
    .await
    .unwrap();
    assert_eq!(out, [0x88, 0x02, 0x03, 0xEA], "expected close 1002");
    h.await.unwrap();
}

#[tokio::test]
async fn oversized_message_gets_a_1009_close() {
    let sb = server_builder().read_buffer_size(0).max_message_size(1000);
    let (addr, h) = serve(sb, |mut s| async move {
        let err = s.recv().await.unwrap_err();
        assert!(
            matches!(
                err,
                Error::Protocol(ProtocolError::MessageTooLarge | ProtocolError::FrameTooLarge)
            ),
            "{err:?}"
        );
    })
    .await;
    // Masked binary frame announcing 2000 bytes.
    let mut frame = vec![0x82, 0xFE, 0x07, 0xD0, 0, 0, 0, 0];
    frame.extend_from_slice(&[0u8; 2000]);
    let out = tokio::task::spawn_blocking(move || raw_client(addr, &frame, T))
        .await
        .unwrap();
    assert_eq!(out, [0x88, 0x02, 0x03, 0xF1], "expected close 1009");
    h.await.unwrap();
}

#[tokio::test]
async fn bad_request_is_refused_with_400() {
    let mut server = server_builder().bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let raw = tokio::task::spawn_blocking(move || {
        let mut s = StdStream::connect(addr).unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    });
    let mut conn = server.accept().await.unwrap();
    assert!(matches!(
        conn.handshake().await,
        Err(Error::Handshake { .. })
    ));
    assert!(raw.await.unwrap().starts_with("HTTP/1.1 400"));
}

#[tokio::test]
async fn server_handshake_timeout_and_subprotocol() {
    let mut server = server_builder()
        .handshake_timeout(Duration::from_millis(200))
        .protocol("v2")
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    // A client that connects and says nothing.
    let silent = StdStream::connect(addr).unwrap();
    let mut conn = server.accept().await.unwrap();
    assert!(matches!(
        conn.handshake().await,
        Err(Error::HandshakeTimeout { .. })
    ));
    drop(silent);
    // Then a real one, offering subprotocols.
    let client = tokio::spawn(async move {
        let c = client_builder()
            .protocol("v1")
            .protocol("v2")
            .connect(&format!("ws://{addr}/feed?x=1"))
            .await
            .unwrap();
        assert_eq!(c.protocol(), Some("v2"));
        c
    });
    let mut s = server.accept().await.unwrap();
    s.handshake().await.unwrap();
    assert_eq!(s.path(), "/feed?x=1");
    assert_eq!(s.protocol(), Some("v2"));
    drop(client.await.unwrap());
}

#[tokio::test]
async fn connect_refused_and_bad_urls_are_typed() {
    let port = StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    assert!(matches!(
        Client::connect(&format!("ws://127.0.0.1:{port}/")).await,
        Err(Error::Connect { .. })
    ));
    assert!(matches!(
        Client::connect("http://127.0.0.1:1/").await,
        Err(Error::Url(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_halves_send_and_receive_in_two_tasks_with_pongs_routed() {
    const N: usize = 500;
    // The server pings, then echoes; it checks the pong the client's read half answered.
    let (addr, h) = serve(server_builder(), |mut s| async move {
        s.send_ping(b"hb").await.unwrap();
        let mut echoed = 0;
        let mut pong = false;
        let mut scratch = Vec::new();
        while let Some(msg) = s.recv().await.unwrap() {
            match msg {
                Message::Pong(p) => {
                    assert_eq!(p, b"hb");
                    pong = true;
                }
                Message::Binary(b) => {
                    scratch.clear();
                    scratch.extend_from_slice(b);
                    s.send_binary(&scratch).await.unwrap();
                    echoed += 1;
                }
                _ => {}
            }
        }
        assert!(pong, "the read half's auto-pong reached the server");
        assert_eq!(echoed, N);
    })
    .await;
    let c = client_builder().connect(&url(addr)).await.unwrap();
    let (mut rx, mut tx) = c.split();
    let writer = tokio::spawn(async move {
        for i in 0..N {
            tx.send_binary(&(i as u32).to_le_bytes()).await.unwrap();
        }
        tx
    });
    let reader = tokio::spawn(async move {
        let mut next = 0u32;
        while (next as usize) < N {
            match rx.recv().await.unwrap() {
                Some(Message::Binary(b)) => {
                    assert_eq!(b, next.to_le_bytes());
                    next += 1;
                }
                Some(Message::Ping(p)) => assert_eq!(p, b"hb"),
                other => panic!("{other:?}"),
            }
        }
        rx
    });
    let mut tx = writer.await.unwrap();
    let mut rx = reader.await.unwrap();
    tx.close(CloseCode::NORMAL, "").await.unwrap();
    assert!(matches!(rx.recv().await.unwrap(), Some(Message::Close(_))));
    assert!(rx.recv().await.unwrap().is_none());
    assert!(tx.is_closed());
    h.await.unwrap();
}

#[tokio::test]
async fn split_server_connection_and_select_on_the_read_half() {
    let mut server = server_builder().bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    let client = tokio::spawn(async move {
        let mut c = client_builder().connect(&url(addr)).await.unwrap();
        for word in ["a", "bb", "ccc"] {
            c.send_text(word).await.unwrap();
        }
        let mut back = Vec::new();
        while let Some(msg) = c.recv().await.unwrap() {
            if let Message::Text(t) = msg {
                back.push(t.to_owned());
            }
        }
        back
    });
    let conn = server.accept().await.unwrap();
    let (mut rx, mut tx) = conn.split().await.unwrap();
    let mut lengths = Vec::new();
    while lengths.len() < 3 {
        tokio::select! {
            m = rx.recv() => if let Some(Message::Text(t)) = m.unwrap() {
                lengths.push(t.len());
            },
            _ = tokio::time::sleep(Duration::from_millis(5)) => {}
        }
    }
    tx.send_text(&format!("{lengths:?}")).await.unwrap();
    tx.close(CloseCode::NORMAL, "").await.unwrap();
    assert!(matches!(rx.recv().await.unwrap(), Some(Message::Close(_))));
    assert!(rx.recv().await.unwrap().is_none());
    assert_eq!(client.await.unwrap(), ["[1, 2, 3]"]);
}

/// The tokio builders have the blocking ones' `keepalive`: a quiet connection sends a
/// ping while `recv` waits, and the peer's pong comes back through `recv`.
#[tokio::test]
async fn keepalive_pings_a_quiet_peer() {
    let (addr, h) = serve(server_builder(), |mut s| async move {
        assert!(matches!(s.recv().await.unwrap(), Some(Message::Ping(_))));
        while s.recv().await.unwrap().is_some() {}
    })
    .await;
    let mut c = client_builder()
        .keepalive(Some(Duration::from_millis(50)))
        .dead_peer_timeout(Some(T))
        .connect(&url(addr))
        .await
        .unwrap();
    assert!(matches!(c.recv().await.unwrap(), Some(Message::Pong(_))));
    c.close(CloseCode::NORMAL, "").await.unwrap();
    while c.recv().await.unwrap().is_some() {}
    h.await.unwrap();
}
