//! The client's check of the server's opening-handshake response
//! (`ClientHandshake::check_response`), with the offered subprotocols, extension offer,
//! key and head size limit chosen by the input's first 19 bytes. Invariants: an accepted
//! response ends within the limit and the input, parses the same from exactly its head,
//! every strict prefix of the head is "need more bytes", the accept key is the one our key
//! asks for and the subprotocol is one we offered; "need more" only below the limit.
use tickwire_codec::ws::handshake::{ClientHandshake, HandshakeError, accept_key};

const PROTOCOLS: &[&str] = &["chat", "superchat"];
const EXTENSIONS: &[(&str, &str)] = &[("Sec-WebSocket-Extensions", "permessage-deflate")];

/// One input of the fuzz target `ws_handshake_client` (see the module docs).
pub fn run(input: &[u8]) {
    let Some((head, bytes)) = input.split_at_checked(19) else {
        return;
    };
    let mut key = [0u8; 16];
    key.copy_from_slice(&head[1..17]);
    let max_len = usize::from(u16::from_le_bytes([head[17], head[18]]));
    let mut hs = ClientHandshake::new("example.com", "/feed", key).max_len(max_len);
    if head[0] & 1 != 0 {
        hs = hs.protocols(PROTOCOLS);
    }
    if head[0] & 2 != 0 {
        hs = hs.headers(EXTENSIONS);
    }

    match hs.check_response(bytes) {
        Ok(Some(resp)) => {
            assert!(resp.consumed <= bytes.len() && resp.consumed <= max_len);
            let again = hs.check_response(&bytes[..resp.consumed]);
            assert_eq!(
                again.as_ref(),
                Ok(&Some(resp.clone())),
                "head alone differs"
            );
            for cut in [resp.consumed - 1, resp.consumed / 2] {
                assert_eq!(hs.check_response(&bytes[..cut]), Ok(None), "prefix {cut}");
            }
            if let Some(p) = resp.protocol {
                assert!(
                    head[0] & 1 != 0 && PROTOCOLS.contains(&p),
                    "not offered: {p}"
                );
            }
            let accept = resp.header("sec-websocket-accept").map(|v| v.trim_ascii());
            assert_eq!(accept, Some(&accept_key(hs.key())[..]));
        }
        Ok(None) => assert!(bytes.len() < max_len, "need more at the limit"),
        Err(HandshakeError::HeaderTooLarge) => {}
        Err(_) => {
            // Any other refusal is about a head that fit the limit.
            assert!(max_len > 0 && !bytes.is_empty());
        }
    }
}
