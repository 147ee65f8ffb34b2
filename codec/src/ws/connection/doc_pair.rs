//! A client and a server [`Connection`] with their opening handshake done, and a pump
//! that moves bytes from one to the other, for the doctests of the methods both share
//! (so their examples run without a socket). Not part of the API.

use crate::rand::{MaskRng, NoMask};
use crate::time::Instant;
use crate::ws::handshake::ClientHandshake;
use crate::ws::{Connection, Masking, Settings};

/// The storage of the doc connections.
#[doc(hidden)]
pub type DocBuf = [u8; 4096];

/// A client and a server connection, opened (the handshake moved by [`doc_pump`]).
#[doc(hidden)]
pub fn doc_pair() -> (
    Connection<DocBuf, DocBuf, MaskRng>,
    Connection<DocBuf, DocBuf, NoMask>,
) {
    let now = Instant::from_nanos(0);
    let hs = ClientHandshake::new("example.com", "/doc", [7; 16]);
    let settings = Settings::default();
    let mut client = Connection::client(
        &hs,
        [0; 4096],
        [0; 4096],
        MaskRng::from_seed([1; 32]),
        &settings,
        now,
    )
    .expect("the doc client");
    let mut server = Connection::server([0; 4096], [0; 4096], &settings, now);
    doc_pump(&mut client, &mut server);
    let _ = server.handle_upgrade(|_| Default::default());
    doc_pump(&mut server, &mut client);
    let _ = client.poll_message();
    (client, server)
}

/// Move what `from` has to send into `to` (as much as `to` takes; a socket would sit
/// between); returns how many bytes moved.
#[doc(hidden)]
pub fn doc_pump<A, B, C, D, E, F>(
    from: &mut Connection<A, B, C>,
    to: &mut Connection<D, E, F>,
) -> usize
where
    A: AsRef<[u8]> + AsMut<[u8]>,
    B: AsRef<[u8]> + AsMut<[u8]>,
    C: Masking,
    D: AsRef<[u8]> + AsMut<[u8]>,
    E: AsRef<[u8]> + AsMut<[u8]>,
    F: Masking,
{
    let n = to.feed(from.transmit());
    from.handle_written(n);
    n
}
