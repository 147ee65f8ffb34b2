//! permessage-deflate that always pays (issue 38), seen on the wire by a raw client that
//! offers the extension and reads the frames a tickwire server sends: a server whose
//! buffers start small and grow on demand sends every message of a compressible corpus
//! compressed (RSV1, fewer bytes), up to messages near its write-buffer limit, and
//! incompressible messages exactly as they are (RSV1 clear, not a byte more). Before,
//! the server compressed only when the compressed size's bound fitted its buffer as it
//! was then, and compressed incompressible data into more bytes than it had.
#![cfg(all(feature = "deflate", unix))]

mod watchdog;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;

use tickwire::codec::ws::deflate::DeflateConfig;
use tickwire::ws::Server;
use watchdog::watchdog;

fn json(n: usize, seed: usize) -> String {
    let mut s = String::new();
    let mut k = seed;
    while s.len() < n {
        s.push_str(&format!(
            "{{\"px\":{},\"qty\":{},\"side\":\"buy\"}},",
            k % 997,
            k % 13
        ));
        k = k.wrapping_mul(31).wrapping_add(7);
    }
    s.truncate(n);
    s
}

fn noise(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// Read one frame's header and payload: (rsv1, payload length).
fn read_frame(s: &mut TcpStream) -> (bool, usize) {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).unwrap();
    let len = match h[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).unwrap();
            usize::from(u16::from_be_bytes(b))
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).unwrap();
            u64::from_be_bytes(b) as usize
        }
        n => usize::from(n),
    };
    assert_eq!(h[1] & 0x80, 0, "a server frame is not masked");
    assert_eq!(h[0] & 0x80, 0x80, "one frame per message here");
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).unwrap();
    (h[0] & 0x40 != 0, len)
}

#[test]
fn compressible_always_compressed_and_incompressible_never_larger() {
    watchdog(|| {
        const LIMIT: usize = 1 << 20;
        let compressible: Vec<usize> = vec![100, 4000, 5000, 20_000, 100_000, 500_000, 1_000_000];
        let incompressible: Vec<usize> = vec![300, 5000, 70_000, 1_000_000];
        let mut server = Server::builder()
            .deflate(DeflateConfig {
                level: 1,
                ..DeflateConfig::default()
            })
            .initial_buffer_size(4096)
            .write_buffer_size(LIMIT)
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.local_addr().unwrap();
        let (c_sizes, n_sizes) = (compressible.clone(), incompressible.clone());
        let h = thread::spawn(move || {
            let mut c = server.accept().unwrap();
            c.handshake().unwrap();
            assert!(c.deflate().is_some());
            for (i, &n) in c_sizes.iter().enumerate() {
                c.send_text(&json(n, i)).unwrap();
            }
            for (i, &n) in n_sizes.iter().enumerate() {
                c.send_binary(&noise(n, i as u32 + 1)).unwrap();
            }
        });
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
        )
        .unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut b).unwrap();
            head.push(b[0]);
        }
        let head = String::from_utf8(head).unwrap();
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        assert!(
            head.to_ascii_lowercase().contains("permessage-deflate"),
            "{head}"
        );
        for &n in &compressible {
            let (rsv1, len) = read_frame(&mut s);
            assert!(rsv1, "{n} compressible bytes went out uncompressed");
            assert!(len < n / 2, "{n} bytes went out as {len}");
        }
        for &n in &incompressible {
            let (rsv1, len) = read_frame(&mut s);
            assert!(
                !rsv1,
                "{n} incompressible bytes went out compressed ({len} bytes)"
            );
            assert_eq!(len, n);
        }
        h.join().unwrap();
    });
}
