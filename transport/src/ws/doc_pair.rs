//! A client and a server connection joined over 127.0.0.1, for the doctests of the
//! methods both share, so their examples run without a remote peer. Not part of the API.

use super::{Client, Error, Server, ServerConnection};

/// A blocking client connected to a blocking server connection on 127.0.0.1, the
/// opening handshake done on both.
#[doc(hidden)]
pub fn doc_pair() -> Result<(Client, ServerConnection), Error> {
    let mut server = Server::bind("127.0.0.1:0")?;
    let url = format!("ws://{}/doc", server.local_addr()?);
    let client = std::thread::spawn(move || Client::connect(&url));
    let mut conn = server.accept()?;
    conn.handshake()?;
    let client = client.join().expect("the doc client's thread")?;
    Ok((client, conn))
}
