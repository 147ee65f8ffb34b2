//! The proxy handshakes as one sans-IO state machine: [`Tunnel`] says what to do next
//! ([`Want`]: write these bytes, read at most this many, or done) and takes what was
//! written and read. No socket, no clock: the blocking and the tokio connectors drive
//! the same machine.
//!
//! It never reads past the proxy's answer, so the first byte after the tunnel is open
//! belongs to the target (a TLS or WebSocket handshake): an HTTP answer is read in
//! steps no longer than what can still precede its closing blank line, a SOCKS5 reply
//! in the exact lengths the protocol gives.

use super::error::ProxyErrorKind;

/// The largest HTTP `CONNECT` answer head accepted.
const MAX_HTTP_ANSWER: usize = 8 << 10;

/// What the driver does next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Want<'a> {
    /// Write these bytes (then [`Tunnel::wrote`] with how many went).
    Write(&'a [u8]),
    /// Read at most this many bytes (then [`Tunnel::read`] with them; an empty slice
    /// means the proxy closed the connection).
    Read(usize),
    /// The tunnel is open: the stream now reaches the target.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// HTTP: the request is being written, then the answer head read.
    HttpRequest,
    HttpAnswer,
    /// SOCKS5: greeting out, method choice in (2 bytes).
    SocksGreeting,
    SocksMethod,
    /// SOCKS5 username/password (RFC 1929): request out, status in (2 bytes).
    SocksAuth,
    SocksAuthStatus,
    /// SOCKS5 CONNECT: request out, reply head in (4 bytes), then the bound address.
    SocksConnect,
    SocksReplyHead,
    SocksDomainLen,
    SocksReplyAddr,
    Done,
}

/// One proxy handshake in progress (see the module docs).
#[derive(Debug)]
pub(crate) struct Tunnel {
    state: State,
    /// Bytes to write in the current writing state, and how many went.
    out: Vec<u8>,
    sent: usize,
    /// The answer read so far in the current reading state.
    input: Vec<u8>,
    /// Reading states with a known length: bytes still to come.
    need: usize,
    /// SOCKS5: the username/password request, written after the method choice asks
    /// for it.
    socks_auth: Option<Vec<u8>>,
    /// SOCKS5: the CONNECT request.
    socks_connect: Vec<u8>,
}

impl Tunnel {
    /// `CONNECT host:port HTTP/1.1`, with `Proxy-Authorization: Basic` when `auth` is
    /// given.
    pub fn http_connect(host: &str, port: u16, auth: Option<(&str, &str)>) -> Tunnel {
        let target = super::join_host_port(host, port);
        let mut req = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
        if let Some((user, pass)) = auth {
            req.push_str("Proxy-Authorization: Basic ");
            req.push_str(&base64(format!("{user}:{pass}").as_bytes()));
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        Tunnel::start(State::HttpRequest, req.into_bytes(), None, Vec::new())
    }

    /// SOCKS5 `CONNECT` to `host:port`: an IP literal as such, a name as a domain
    /// (ATYP 3) for the proxy to resolve. Offers username/password when `auth` is given
    /// (no-auth otherwise).
    pub fn socks5(host: &str, port: u16, auth: Option<(&str, &str)>) -> Tunnel {
        let greeting = match auth {
            Some(_) => vec![5, 1, 2],
            None => vec![5, 1, 0],
        };
        let socks_auth = auth.map(|(user, pass)| {
            // RFC 1929: each field is 1..=255 bytes (longer ones are cut; the proxy
            // will refuse them).
            let (user, pass) = (&user.as_bytes()[..user.len().min(255)], {
                &pass.as_bytes()[..pass.len().min(255)]
            });
            let mut v = vec![1, user.len() as u8];
            v.extend_from_slice(user);
            v.push(pass.len() as u8);
            v.extend_from_slice(pass);
            v
        });
        let mut connect = vec![5, 1, 0];
        match host.parse::<std::net::IpAddr>() {
            Ok(std::net::IpAddr::V4(ip)) => {
                connect.push(1);
                connect.extend_from_slice(&ip.octets());
            }
            Ok(std::net::IpAddr::V6(ip)) => {
                connect.push(4);
                connect.extend_from_slice(&ip.octets());
            }
            Err(_) => {
                let name = &host.as_bytes()[..host.len().min(255)];
                connect.push(3);
                connect.push(name.len() as u8);
                connect.extend_from_slice(name);
            }
        }
        connect.extend_from_slice(&port.to_be_bytes());
        Tunnel::start(State::SocksGreeting, greeting, socks_auth, connect)
    }

    fn start(state: State, out: Vec<u8>, socks_auth: Option<Vec<u8>>, connect: Vec<u8>) -> Tunnel {
        Tunnel {
            state,
            out,
            sent: 0,
            input: Vec::new(),
            need: 0,
            socks_auth,
            socks_connect: connect,
        }
    }

    /// What to do next.
    pub fn want(&self) -> Want<'_> {
        match self.state {
            State::HttpRequest | State::SocksGreeting | State::SocksAuth | State::SocksConnect => {
                Want::Write(&self.out[self.sent..])
            }
            State::HttpAnswer => Want::Read(http_read_len(&self.input)),
            State::SocksMethod
            | State::SocksAuthStatus
            | State::SocksReplyHead
            | State::SocksDomainLen
            | State::SocksReplyAddr => Want::Read(self.need),
            State::Done => Want::Done,
        }
    }

    /// `n` bytes of [`Want::Write`] were written.
    pub fn wrote(&mut self, n: usize) {
        self.sent = (self.sent + n).min(self.out.len());
        if self.sent < self.out.len() {
            return;
        }
        self.out.clear();
        self.sent = 0;
        self.input.clear();
        (self.state, self.need) = match self.state {
            State::HttpRequest => (State::HttpAnswer, 0),
            State::SocksGreeting => (State::SocksMethod, 2),
            State::SocksAuth => (State::SocksAuthStatus, 2),
            State::SocksConnect => (State::SocksReplyHead, 4),
            s => (s, self.need),
        };
    }

    /// Bytes read for [`Want::Read`] (at most what it asked; empty: the proxy closed).
    pub fn read(&mut self, data: &[u8]) -> Result<(), ProxyErrorKind> {
        if data.is_empty() {
            return Err(ProxyErrorKind::Closed);
        }
        self.input.extend_from_slice(data);
        if self.state == State::HttpAnswer {
            return self.http_answer();
        }
        self.need = self.need.saturating_sub(data.len());
        if self.need > 0 {
            return Ok(());
        }
        match self.state {
            State::SocksMethod => self.socks_method(),
            State::SocksAuthStatus => self.socks_auth_status(),
            State::SocksReplyHead => self.socks_reply_head(),
            State::SocksDomainLen => {
                // The bound name's length, then the name and the port.
                self.state = State::SocksReplyAddr;
                self.need = usize::from(self.input[4]) + 2;
                Ok(())
            }
            State::SocksReplyAddr => {
                self.state = State::Done;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn write_next(&mut self, state: State, out: Vec<u8>) {
        self.state = state;
        self.out = out;
        self.sent = 0;
    }

    fn http_answer(&mut self) -> Result<(), ProxyErrorKind> {
        if !self.input.ends_with(b"\r\n\r\n") {
            if self.input.len() >= MAX_HTTP_ANSWER {
                return Err(ProxyErrorKind::Garbage("answer head longer than 8 KiB"));
            }
            // Check the status line as soon as it is there, so garbage fails early.
            if let Some(end) = self.input.windows(2).position(|w| w == b"\r\n") {
                status_line(&self.input[..end])?;
            } else if !b"HTTP/1.".starts_with(&self.input[..self.input.len().min(7)]) {
                return Err(ProxyErrorKind::Garbage(
                    "answer does not start with HTTP/1.x",
                ));
            }
            return Ok(());
        }
        let end = self
            .input
            .windows(2)
            .position(|w| w == b"\r\n")
            .unwrap_or(0);
        let (status, reason) = status_line(&self.input[..end])?;
        match status {
            200..=299 => {
                self.state = State::Done;
                Ok(())
            }
            // 407 by the book; tinyproxy answers wrong credentials with 401.
            401 | 407 => Err(ProxyErrorKind::AuthRejected { status }),
            _ => Err(ProxyErrorKind::Refused { status, reason }),
        }
    }

    fn socks_method(&mut self) -> Result<(), ProxyErrorKind> {
        if self.input[0] != 5 {
            return Err(ProxyErrorKind::Garbage(
                "method choice is not SOCKS version 5",
            ));
        }
        match (self.input[1], self.socks_auth.take()) {
            (0, None) => {
                let connect = std::mem::take(&mut self.socks_connect);
                self.write_next(State::SocksConnect, connect);
                Ok(())
            }
            (2, Some(auth)) => {
                self.write_next(State::SocksAuth, auth);
                Ok(())
            }
            (0xff, _) => Err(ProxyErrorKind::NoAcceptableAuth),
            _ => Err(ProxyErrorKind::Garbage(
                "proxy chose a method that was not offered",
            )),
        }
    }

    fn socks_auth_status(&mut self) -> Result<(), ProxyErrorKind> {
        // RFC 1929 says version 1; some servers echo 5. Only the status counts.
        match self.input[1] {
            0 => {
                let connect = std::mem::take(&mut self.socks_connect);
                self.write_next(State::SocksConnect, connect);
                Ok(())
            }
            status => Err(ProxyErrorKind::AuthRejected {
                status: u16::from(status),
            }),
        }
    }

    fn socks_reply_head(&mut self) -> Result<(), ProxyErrorKind> {
        let head = [self.input[0], self.input[1], self.input[2], self.input[3]];
        if head[0] != 5 {
            return Err(ProxyErrorKind::Garbage("reply is not SOCKS version 5"));
        }
        if head[1] != 0 {
            return Err(ProxyErrorKind::SocksReply(head[1]));
        }
        (self.state, self.need) = match head[3] {
            1 => (State::SocksReplyAddr, 4 + 2),
            4 => (State::SocksReplyAddr, 16 + 2),
            3 => (State::SocksDomainLen, 1),
            _ => return Err(ProxyErrorKind::Garbage("reply has an unknown address type")),
        };
        Ok(())
    }
}

/// How many answer bytes may be read now without reading past the blank line that
/// ends the head: what `head` lacks of ending in `\r\n\r\n`.
fn http_read_len(head: &[u8]) -> usize {
    const END: &[u8] = b"\r\n\r\n";
    (1..=3)
        .rev()
        .find(|&k| head.ends_with(&END[..k]))
        .map_or(4, |k| 4 - k)
}

/// `HTTP/1.x SSS reason` into the status and reason.
fn status_line(line: &[u8]) -> Result<(u16, String), ProxyErrorKind> {
    let bad = ProxyErrorKind::Garbage("malformed status line");
    let rest = line
        .strip_prefix(b"HTTP/1.")
        .ok_or(ProxyErrorKind::Garbage(
            "answer does not start with HTTP/1.x",
        ))?;
    let (&minor, rest) = rest.split_first().ok_or(bad.clone())?;
    let rest = rest.strip_prefix(b" ").ok_or(bad.clone())?;
    let code = rest.get(..3).ok_or(bad.clone())?;
    if !minor.is_ascii_digit() || !code.iter().all(u8::is_ascii_digit) {
        return Err(bad);
    }
    let status = code.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    let reason = rest[3..].strip_prefix(b" ").unwrap_or(&rest[3..]);
    let reason = String::from_utf8_lossy(&reason[..reason.len().min(200)]).into_owned();
    Ok((status, reason))
}

/// Standard base64 with padding (RFC 4648), for Basic auth: the codec's encoder.
fn base64(input: &[u8]) -> String {
    use tickwire_codec::ws::handshake::base64;
    let mut out = vec![0u8; base64::encoded_len(input.len()).unwrap_or(0)];
    let n = base64::encode(input, &mut out).unwrap_or(0);
    out.truncate(n);
    // The alphabet is ASCII.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive `t` against a scripted proxy: `script` is what the proxy answers after
    /// each write, fed in reads of exactly the asked size (or less when the script
    /// runs out). Returns everything written and the result.
    fn drive(t: &mut Tunnel, answers: &[&[u8]]) -> (Vec<Vec<u8>>, Result<(), ProxyErrorKind>) {
        let mut written = Vec::new();
        let mut answers = answers.iter();
        let mut pending: &[u8] = &[];
        loop {
            match t.want() {
                Want::Done => return (written, Ok(())),
                Want::Write(b) => {
                    let b = b.to_vec();
                    // Write in two parts to exercise partial writes.
                    let half = b.len() / 2;
                    t.wrote(half);
                    t.wrote(b.len() - half);
                    written.push(b);
                    pending = answers.next().copied().unwrap_or(&[]);
                }
                Want::Read(n) => {
                    assert!(n > 0);
                    let take = n.min(pending.len());
                    let (now, rest) = pending.split_at(take);
                    pending = rest;
                    if let Err(e) = t.read(now) {
                        return (written, Err(e));
                    }
                }
            }
        }
    }

    #[test]
    fn http_connect_with_basic_auth() {
        let mut t = Tunnel::http_connect("example.com", 443, Some(("Aladdin", "open sesame")));
        let (w, r) = drive(
            &mut t,
            &[b"HTTP/1.1 200 Connection established\r\nVia: x\r\n\r\nTARGET"],
        );
        assert_eq!(r, Ok(()));
        assert_eq!(
            w[0],
            b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\
              Proxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n\r\n"
        );
    }

    #[test]
    fn http_never_reads_past_the_head() {
        let answer = b"HTTP/1.0 200 OK\r\n\r\n";
        let mut t = Tunnel::http_connect("::1", 80, None);
        t.wrote(1 << 20);
        let mut fed = 0;
        while let Want::Read(n) = t.want() {
            assert!(fed + n <= answer.len(), "asked past the head at {fed}+{n}");
            t.read(&answer[fed..fed + n]).unwrap();
            fed += n;
        }
        assert_eq!(t.want(), Want::Done);
        assert_eq!(fed, answer.len());
    }

    #[test]
    fn http_refusals_are_typed() {
        let mut t = Tunnel::http_connect("h", 1, None);
        let r = drive(
            &mut t,
            &[b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"],
        )
        .1;
        assert_eq!(r, Err(ProxyErrorKind::AuthRejected { status: 407 }));
        let mut t = Tunnel::http_connect("h", 1, None);
        let r = drive(&mut t, &[b"HTTP/1.1 403 Filtered\r\nX: y\r\n\r\n"]).1;
        assert_eq!(
            r,
            Err(ProxyErrorKind::Refused {
                status: 403,
                reason: "Filtered".into()
            })
        );
    }

    #[test]
    fn http_garbage_and_early_close() {
        for (answer, want) in [
            (
                &b"SSH-2.0-OpenSSH\r\n"[..],
                "answer does not start with HTTP/1.x",
            ),
            (b"HTTP/1.1 2x0 OK\r\n\r\n", "malformed status line"),
            (b"HTTP/1.1\r\n", "malformed status line"),
        ] {
            let mut t = Tunnel::http_connect("h", 1, None);
            assert_eq!(
                drive(&mut t, &[answer]).1,
                Err(ProxyErrorKind::Garbage(want))
            );
        }
        // Garbage is seen on its first bytes, before any line end.
        let mut t = Tunnel::http_connect("h", 1, None);
        t.wrote(1 << 20);
        assert_eq!(
            t.read(b"\x16\x03\x01\x00"),
            Err(ProxyErrorKind::Garbage(
                "answer does not start with HTTP/1.x"
            ))
        );
        let mut t = Tunnel::http_connect("h", 1, None);
        assert_eq!(
            drive(&mut t, &[b"HTTP/1.1 200 OK\r\n"]).1,
            Err(ProxyErrorKind::Closed)
        );
        let mut t = Tunnel::http_connect("h", 1, None);
        let long = [b"HTTP/1.1 200 OK\r\n".as_slice(), &[b'a'; 9000]].concat();
        assert_eq!(
            drive(&mut t, &[&long]).1,
            Err(ProxyErrorKind::Garbage("answer head longer than 8 KiB"))
        );
    }

    #[test]
    fn socks5_no_auth_domain_target() {
        let mut t = Tunnel::socks5("localhost", 8080, None);
        let (w, r) = drive(
            &mut t,
            &[
                &[5, 0],
                &[
                    5, 0, 0, 3, 9, b'l', b'o', b'c', b'a', b'l', b'h', b'o', b's', b't', 0x1f, 0x90,
                ],
            ],
        );
        assert_eq!(r, Ok(()));
        assert_eq!(w[0], [5, 1, 0]);
        assert_eq!(
            w[1],
            [
                5, 1, 0, 3, 9, b'l', b'o', b'c', b'a', b'l', b'h', b'o', b's', b't', 0x1f, 0x90
            ]
        );
    }

    #[test]
    fn socks5_user_password_ip_targets() {
        let mut t = Tunnel::socks5("127.0.0.1", 80, Some(("u", "pw")));
        let (w, r) = drive(
            &mut t,
            &[&[5, 2], &[1, 0], &[5, 0, 0, 1, 127, 0, 0, 1, 0, 80]],
        );
        assert_eq!(r, Ok(()));
        assert_eq!(w[0], [5, 1, 2]);
        assert_eq!(w[1], [1, 1, b'u', 2, b'p', b'w']);
        assert_eq!(w[2], [5, 1, 0, 1, 127, 0, 0, 1, 0, 80]);
        let mut t = Tunnel::socks5("::1", 443, None);
        let reply = [&[5u8, 0, 0, 4][..], &[0; 16], &[1, 187]].concat();
        let (w, r) = drive(&mut t, &[&[5, 0], &reply]);
        assert_eq!(r, Ok(()));
        assert_eq!(w[1][3], 4);
        assert_eq!(w[1].len(), 4 + 16 + 2);
    }

    #[test]
    fn socks5_failures_are_typed() {
        let mut t = Tunnel::socks5("h", 1, Some(("u", "bad")));
        assert_eq!(
            drive(&mut t, &[&[5, 2], &[1, 1]]).1,
            Err(ProxyErrorKind::AuthRejected { status: 1 })
        );
        let mut t = Tunnel::socks5("h", 1, None);
        assert_eq!(
            drive(&mut t, &[&[5, 0xff]]).1,
            Err(ProxyErrorKind::NoAcceptableAuth)
        );
        let mut t = Tunnel::socks5("h", 1, None);
        assert_eq!(
            drive(&mut t, &[&[5, 2]]).1,
            Err(ProxyErrorKind::Garbage(
                "proxy chose a method that was not offered"
            ))
        );
        let mut t = Tunnel::socks5("h", 1, None);
        assert_eq!(
            drive(&mut t, &[&[5, 0], &[5, 5, 0, 1]]).1,
            Err(ProxyErrorKind::SocksReply(5))
        );
        let mut t = Tunnel::socks5("h", 1, None);
        assert_eq!(
            drive(&mut t, &[b"HTTP/1.1 400 Bad\r\n"]).1,
            Err(ProxyErrorKind::Garbage(
                "method choice is not SOCKS version 5"
            ))
        );
        let mut t = Tunnel::socks5("h", 1, None);
        assert_eq!(
            drive(&mut t, &[&[5, 0], &[5, 0, 0, 9]]).1,
            Err(ProxyErrorKind::Garbage("reply has an unknown address type"))
        );
        // Closed mid-reply.
        let mut t = Tunnel::socks5("h", 1, None);
        assert_eq!(
            drive(&mut t, &[&[5, 0], &[5, 0, 0, 1, 127]]).1,
            Err(ProxyErrorKind::Closed)
        );
    }
}
