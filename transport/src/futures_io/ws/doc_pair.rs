//! Connected pairs for the documentation's examples (hidden from the docs).

use std::future::{Future, poll_fn};
use std::net::{SocketAddr, TcpListener};
use std::pin::pin;
use std::task::Poll;

use async_io::Async;

use super::{Client, ServerBuilder, ServerConnection};
use crate::futures_io::TcpStream;
use crate::ws::Error;

/// A client and the server connection it made (the handshake done), over loopback
/// TCP with async-io's reactor; the request target is `/feed`.
#[doc(hidden)]
pub async fn doc_pair() -> Result<(Client, ServerConnection), Error> {
    let listener = Async::<TcpListener>::bind(([127, 0, 0, 1], 0))?;
    let addr = listener.get_ref().local_addr()?;
    let tcp = TcpStream::connect(addr).await?;
    let (accepted, _) = listener.accept().await?;
    let mut server = ServerBuilder::new().accept_stream(TcpStream::from(accepted))?;
    let url = format!("ws://{addr}/feed");
    let (client, handshake) = join(Client::connect_with(tcp, &url), server.handshake()).await;
    handshake?;
    Ok((client?, server))
}

/// A URL and a connected stream to it: a blocking server on its own thread that, on
/// each connection, sends `welcome` and echoes text until the close.
#[doc(hidden)]
pub async fn doc_server() -> Result<(String, TcpStream), Error> {
    let mut server = crate::ws::Server::bind("127.0.0.1:0")?;
    let addr: SocketAddr = server.local_addr()?;
    std::thread::spawn(move || {
        while let Ok(mut conn) = server.accept() {
            std::thread::spawn(move || -> Result<(), Error> {
                conn.send_text("welcome")?;
                while conn
                    .recv_with(|msg, tx| match msg {
                        crate::ws::Message::Text(t) => tx.send_text(t),
                        _ => Ok(()),
                    })?
                    .is_some()
                {}
                Ok(())
            });
        }
    });
    let tcp = TcpStream::connect(addr).await?;
    Ok((format!("ws://{addr}/feed"), tcp))
}

/// Both futures to completion, polled in turn.
async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    poll_fn(|cx| {
        if ra.is_none()
            && let Poll::Ready(r) = a.as_mut().poll(cx)
        {
            ra = Some(r);
        }
        if rb.is_none()
            && let Poll::Ready(r) = b.as_mut().poll(cx)
        {
            rb = Some(r);
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                ra = x;
                rb = y;
                Poll::Pending
            }
        }
    })
    .await
}
