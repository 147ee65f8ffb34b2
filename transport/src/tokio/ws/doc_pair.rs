//! A client and a server connection joined over 127.0.0.1, for the doctests of the
//! async methods both share. Not part of the API.

use super::{Client, Server, ServerConnection};
use crate::ws::Error;

/// An async client connected to an async server connection on 127.0.0.1, the opening
/// handshake done on both (inside a tokio runtime).
#[doc(hidden)]
pub async fn doc_pair() -> Result<(Client, ServerConnection), Error> {
    let mut server = Server::bind("127.0.0.1:0").await?;
    let url = format!("ws://{}/doc", server.local_addr()?);
    let accept = ::tokio::spawn(async move {
        let mut conn = server.accept().await?;
        conn.handshake().await?;
        Ok::<_, Error>(conn)
    });
    let client = Client::connect(&url).await?;
    let conn = accept.await.expect("the doc server's task")?;
    Ok((client, conn))
}
