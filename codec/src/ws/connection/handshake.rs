//! The opening handshake inside a [`Connection`](super::Connection): the client checks the
//! server's answer, the server parses the request and answers it. The head is read into
//! the frame reader's free space; bytes after it are the first frames and stay there.

use super::{Connection, ConnectionError, State};
use crate::ws::Masking;
use crate::ws::handshake::{
    self, HandshakeError, MAX_OFFERED_PROTOCOLS_LEN, ResponseCheck, UpgradeRequest,
};

/// Where the opening handshake stands.
// One per connection, inline (no allocation in the codec): the size is the check's.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(super) enum Hs {
    /// A client waiting for the `101` (the request is queued).
    Client(ResponseCheck),
    /// A server waiting for the request.
    Server,
    /// Over (messages flow, or the connection failed).
    Done,
}

/// A server's answer to an upgrade request.
#[derive(Debug, Clone, Copy)]
pub enum Answer<'a> {
    /// Accept with this subprotocol (one the client offered) and extra response headers.
    Accept {
        /// The chosen subprotocol, if any.
        protocol: Option<&'a str>,
        /// Extra headers for the `101` (validated; may not repeat the handshake's own).
        headers: &'a [(&'a str, &'a str)],
    },
    /// Refuse with the status this error calls for ([`handshake::reject_status`]).
    Reject(HandshakeError),
    /// Refuse with `status` (300 to 599), extra response `headers` and `body`
    /// ([`handshake::write_refusal`]); the connection then fails with
    /// [`HandshakeError::Refused`]. A refusal that cannot be written (a bad status or
    /// header, no room in the output buffer) is answered with the codec's 400 instead,
    /// and the connection fails with that error.
    Refuse {
        /// The HTTP status (e.g. 401, 403, 404).
        status: u16,
        /// Extra response headers (validated; not `Content-Length`, `Connection`,
        /// `Transfer-Encoding`).
        headers: &'a [(&'a str, &'a str)],
        /// The response body (`Content-Length` is written for it).
        body: &'a [u8],
    },
}

impl Default for Answer<'_> {
    /// Accept, with no subprotocol and no extra headers.
    fn default() -> Self {
        Answer::Accept {
            protocol: None,
            headers: &[],
        }
    }
}

impl<R, W, M> Connection<R, W, M>
where
    R: AsRef<[u8]> + AsMut<[u8]>,
    W: AsRef<[u8]> + AsMut<[u8]>,
    M: Masking,
{
    /// Server: look at the request received so far and, once it is whole, answer it with
    /// what `decide` says. `Ok(true)`: the handshake is over and messages flow (also
    /// when it was over before); `Ok(false)`: more bytes are needed. A bad request (or
    /// a refusal) queues the HTTP answer and fails with [`ConnectionError::Handshake`].
    /// In the client role this only reports whether the handshake is over.
    pub fn handle_upgrade<'a>(
        &mut self,
        decide: impl FnOnce(&UpgradeRequest<'_>) -> Answer<'a>,
    ) -> Result<bool, ConnectionError> {
        match self.hs {
            Hs::Done => return self.handshake_over(),
            Hs::Client(_) => return self.drive_client(),
            Hs::Server => {}
        }
        if !core::mem::take(&mut self.hs_new) {
            return Ok(false);
        }
        let got = self.hs_got;
        let max_len = self.max_head_len;
        let spare = self.reader.spare_mut();
        let limit = spare.len().min(max_len);
        // The application's own refusal is queued already.
        let mut refused = false;
        let outcome = match handshake::parse_request_with_limit(&spare[..got], limit) {
            Ok(None) if got >= limit => Err(HandshakeError::HeaderTooLarge),
            Ok(None) => return Ok(false),
            Ok(Some(req)) => match decide(&req) {
                Answer::Refuse {
                    status,
                    headers,
                    body,
                } => {
                    let out = self.tx.out();
                    out.clear();
                    let room = out.remaining();
                    let written = out
                        .reserve(room)
                        .map_err(|_| HandshakeError::BufferTooSmall)
                        .and_then(|buf| handshake::write_refusal(status, headers, body, buf));
                    match written {
                        Ok(n) => {
                            out.commit(n);
                            refused = true;
                            Err(HandshakeError::Refused(status))
                        }
                        Err(e) => Err(e),
                    }
                }
                answer => {
                    #[cfg(feature = "deflate")]
                    let deflate = self.deflate_config.and_then(|c| req.deflate(&c));
                    #[cfg(not(feature = "deflate"))]
                    let deflate = NoDeflate;
                    answer_request(&req, answer, deflate, &mut self.protocol, self.tx.out())
                        .map(|n| (n, deflate))
                }
            },
            Err(e) => Err(e),
        };
        match outcome {
            Ok((consumed, _deflate)) => {
                #[cfg(feature = "deflate")]
                if let Some(n) = _deflate {
                    self.enable_deflate(n);
                }
                self.open(consumed);
                Ok(true)
            }
            Err(e) if refused => Err(self.fail_handshake(e)),
            Err(e) => {
                // Whatever the answer was, the refusal replaces it.
                let out = self.tx.out();
                out.clear();
                let room = out.remaining();
                if let Ok(buf) = out.reserve(room)
                    && let Ok(n) = handshake::write_reject(e, buf)
                {
                    out.commit(n);
                }
                Err(self.fail_handshake(e))
            }
        }
    }

    /// Client: check the answer received so far. `Ok(true)` once the handshake is over.
    pub(super) fn drive_client(&mut self) -> Result<bool, ConnectionError> {
        let Hs::Client(check) = &self.hs else {
            return self.handshake_over();
        };
        if !core::mem::take(&mut self.hs_new) {
            return Ok(false);
        }
        let got = self.hs_got;
        let spare = self.reader.spare_mut();
        let outcome = match check.check(&spare[..got]) {
            Ok(None) if got >= spare.len() => Err(HandshakeError::HeaderTooLarge),
            Ok(None) => return Ok(false),
            Ok(Some(resp)) => {
                self.protocol.clear();
                // A chosen protocol is one we offered, so it fits.
                let _ = self.protocol.push_str(resp.protocol.unwrap_or(""));
                #[cfg(feature = "deflate")]
                let deflate = resp.deflate();
                #[cfg(not(feature = "deflate"))]
                let deflate = NoDeflate;
                Ok((resp.consumed, deflate))
            }
            Err(e) => Err(e),
        };
        match outcome {
            Ok((consumed, _deflate)) => {
                #[cfg(feature = "deflate")]
                if let Some(n) = _deflate {
                    self.enable_deflate(n);
                }
                self.open(consumed);
                Ok(true)
            }
            Err(e) => Err(self.fail_handshake(e)),
        }
    }

    fn handshake_over(&self) -> Result<bool, ConnectionError> {
        if self.tx.failed {
            Err(ConnectionError::AlreadyClosed)
        } else {
            Ok(true)
        }
    }

    /// The head of `consumed` bytes is done with: the bytes after it are frames.
    pub(super) fn open(&mut self, consumed: usize) {
        let got = self.hs_got;
        let spare = self.reader.spare_mut();
        let consumed = consumed.min(got);
        spare.copy_within(consumed..got, 0);
        self.reader.commit(got - consumed);
        self.hs = Hs::Done;
        self.hs_got = 0;
        self.tx.state = State::Open;
        self.tx.timers.handshake = None;
        self.tx.timers.rx = true;
    }

    fn fail_handshake(&mut self, e: HandshakeError) -> ConnectionError {
        self.hs = Hs::Done;
        self.tx.timers.handshake = None;
        self.tx.finish(true);
        ConnectionError::Handshake(e)
    }
}

/// What permessage-deflate agreed on: its parameters with the feature, nothing without.
#[cfg(feature = "deflate")]
type Deflate = Option<crate::ws::deflate::Negotiated>;
/// What permessage-deflate agreed on: its parameters with the feature, nothing without.
#[cfg(not(feature = "deflate"))]
type Deflate = NoDeflate;

/// Without the `deflate` feature, nothing is ever negotiated.
#[cfg(not(feature = "deflate"))]
#[derive(Debug, Clone, Copy)]
struct NoDeflate;

/// Write the `101` for `answer` (answering permessage-deflate with `deflate`) into
/// `out`, and the chosen protocol into `protocol`; the head's length, or why the
/// request is refused.
fn answer_request<W: AsRef<[u8]> + AsMut<[u8]>>(
    req: &UpgradeRequest<'_>,
    answer: Answer<'_>,
    deflate: Deflate,
    protocol: &mut heapless::String<MAX_OFFERED_PROTOCOLS_LEN>,
    out: &mut crate::buf::WriteBuf<W>,
) -> Result<usize, HandshakeError> {
    let (chosen, headers) = match answer {
        Answer::Accept { protocol, headers } => (protocol, headers),
        Answer::Reject(e) => return Err(e),
        // Answered before this is called.
        Answer::Refuse { status, .. } => return Err(HandshakeError::Refused(status)),
    };
    protocol.clear();
    protocol
        .push_str(chosen.unwrap_or(""))
        .map_err(|_| HandshakeError::InvalidHeader)?;
    let room = out.remaining();
    let buf = out
        .reserve(room)
        .map_err(|_| HandshakeError::BufferTooSmall)?;
    #[cfg(feature = "deflate")]
    let n = handshake::write_accept_deflate(req, chosen, deflate.as_ref(), headers, buf)?;
    #[cfg(not(feature = "deflate"))]
    let n = {
        let NoDeflate = deflate;
        handshake::write_accept(req, chosen, headers, buf)?
    };
    out.commit(n);
    Ok(req.consumed)
}
