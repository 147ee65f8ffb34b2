//! What the REST tests' scripted servers share: reading one request off a raw socket.
#![allow(dead_code)]

use std::io::Read;
use std::net::TcpStream;

/// Read one request head (and a Content-Length body) from `s`; `None` on EOF.
pub fn read_request(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => buf.push(b[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .map_or(0, |v| v.trim().parse::<usize>().unwrap());
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    buf.extend_from_slice(&body);
    Some(buf)
}
