//! The `futures` Stream/Sink view of the tokio adapter (owned messages): echo through
//! the sink and stream, auto-pong underneath, the close handshake through
//! `poll_close`, and the stream's end.
#![cfg(all(feature = "futures", unix))]

use std::future::poll_fn;
use std::pin::Pin;
use std::time::Duration;

use futures_core::Stream;
use futures_sink::Sink;
use tickwire::tokio::ws::{Client, CloseCode, Error, Messages, OwnedMessage, Server};

const T: Duration = Duration::from_secs(20);

async fn next<S: Stream + Unpin>(s: &mut S) -> Option<S::Item> {
    poll_fn(|cx| Pin::new(&mut *s).poll_next(cx)).await
}

async fn send<S: Sink<OwnedMessage, Error = Error> + Unpin>(
    s: &mut S,
    msg: OwnedMessage,
) -> Result<(), Error> {
    poll_fn(|cx| Pin::new(&mut *s).poll_ready(cx)).await?;
    Pin::new(&mut *s).start_send(msg)?;
    poll_fn(|cx| Pin::new(&mut *s).poll_flush(cx)).await
}

#[tokio::test]
async fn stream_and_sink_echo_owned_messages() {
    let mut server = Server::builder()
        .read_timeout(Some(T))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    // Server: the Stream/Sink view over a connection whose handshake runs on first poll.
    let h = tokio::spawn(async move {
        let mut m: Messages<_> = server.accept().await.unwrap().into_messages();
        let mut seen = Vec::new();
        while let Some(msg) = next(&mut m).await {
            let msg = msg.unwrap();
            seen.push(msg.clone());
            match msg {
                OwnedMessage::Text(_) | OwnedMessage::Binary(_) => send(&mut m, msg).await.unwrap(),
                _ => {}
            }
        }
        seen
    });
    let mut c = Client::builder()
        .read_timeout(Some(T))
        .connect(&format!("ws://{addr}/"))
        .await
        .unwrap()
        .into_messages();
    send(&mut c, OwnedMessage::Text("tick".into()))
        .await
        .unwrap();
    assert_eq!(
        next(&mut c).await.unwrap().unwrap(),
        OwnedMessage::Text("tick".into())
    );
    send(&mut c, OwnedMessage::Binary(vec![1, 2, 3]))
        .await
        .unwrap();
    assert_eq!(
        next(&mut c).await.unwrap().unwrap(),
        OwnedMessage::Binary(vec![1, 2, 3])
    );
    send(&mut c, OwnedMessage::Ping(b"p".to_vec()))
        .await
        .unwrap();
    assert_eq!(
        next(&mut c).await.unwrap().unwrap(),
        OwnedMessage::Pong(b"p".to_vec())
    );
    poll_fn(|cx| Pin::new(&mut c).poll_close(cx)).await.unwrap();
    match next(&mut c).await.unwrap().unwrap() {
        OwnedMessage::Close(Some((code, _))) => assert_eq!(code, CloseCode::NORMAL),
        other => panic!("{other:?}"),
    }
    assert!(next(&mut c).await.is_none());
    assert!(c.into_inner().is_closed());
    let seen = h.await.unwrap();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(matches!(
        seen[3],
        OwnedMessage::Close(Some((CloseCode::NORMAL, _)))
    ));
}

#[tokio::test]
async fn stream_reports_the_close_timeout() {
    let mut server = Server::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    // The server holds the connection, reading nothing, until the client has timed out
    // (an event: a server that slept a while could close first on a loaded machine).
    let (done, wait) = tokio::sync::oneshot::channel::<()>();
    let h = tokio::spawn(async move {
        let mut s = server.accept().await.unwrap();
        s.handshake().await.unwrap();
        let _ = wait.await;
        drop(s);
    });
    let mut c = Client::builder()
        .close_timeout(Duration::from_millis(200))
        .connect(&format!("ws://{addr}/"))
        .await
        .unwrap()
        .into_messages();
    poll_fn(|cx| Pin::new(&mut c).poll_close(cx)).await.unwrap();
    assert!(matches!(next(&mut c).await, Some(Err(Error::CloseTimeout))));
    done.send(()).unwrap();
    h.await.unwrap();
}
