//! ChunkedDecoder: the chunked transfer coding (RFC 9112 §7.1), decoded in place.
//!
//! Usable on its own: give it a buffer, where decoded data goes (`dst`) and
//! where undecoded bytes start (`src`, with `dst <= src`); chunk data is
//! moved down over the chunk lines before it, so the body ends up
//! contiguous without a second buffer. Chunk extensions are checked and
//! skipped; trailer fields are checked and left in place (their position is
//! reported). Every malformed size line (non-hex, overflow, missing CRLF)
//! is a typed [`Error`]; a partial input is progress, never an error.

use super::error::Error;
use super::syntax::hex_val;

/// Longest chunk size line (size + extensions) accepted.
pub const MAX_CHUNK_LINE: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading hex digits of a chunk size (`line` counts them).
    Size,
    /// After the size: optional whitespace before `;` or CR.
    SizeWs,
    /// Inside chunk extensions, up to CR.
    Ext,
    /// CR of the size line seen, LF expected.
    SizeLf,
    /// Chunk data: `remaining` bytes to go.
    Data,
    /// CR expected after chunk data.
    DataCr,
    /// LF expected after chunk data.
    DataLf,
    /// At the start of a trailer line (or the final CRLF).
    TrailerStart,
    /// In a trailer field name.
    TrailerName,
    /// In a trailer field value.
    TrailerValue,
    /// LF expected after a trailer line.
    TrailerLf,
    /// LF expected after the final CR.
    EndLf,
    /// The body is complete.
    Done,
}

/// Progress of one [`ChunkedDecoder::decode_in_place`] call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// Undecoded bytes consumed from `src`.
    pub read: usize,
    /// Data bytes written at `dst`.
    pub written: usize,
    /// The last chunk and the trailer section are complete: bytes after
    /// `src + read` belong to the next message.
    pub done: bool,
}

/// Incremental decoder of one chunked body.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    /// Size being parsed, then data bytes left in the current chunk.
    remaining: u64,
    /// Bytes of the current size or trailer line.
    line: usize,
    /// Data bytes decoded so far.
    total: u64,
    max_body: u64,
    /// Trailer bytes so far, and their limit.
    trailer_len: usize,
    max_trailers: usize,
    /// Where the trailer section starts, in the coordinates of the buffers passed.
    trailer_start: Option<usize>,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        Self::new(u64::MAX, 8 * 1024)
    }
}

impl ChunkedDecoder {
    /// A decoder accepting at most `max_body` data bytes and `max_trailers`
    /// bytes of trailer section.
    ///
    /// ```
    /// use tickwire_codec::http::ChunkedDecoder;
    ///
    /// let mut d = ChunkedDecoder::new(1 << 20, 16); // body limit, trailer count
    /// let mut body = *b"5\r\nhello\r\n0\r\n\r\n";
    /// let out = d.decode_in_place(&mut body, 0, 0).unwrap(); // the whole buffer
    /// assert!(out.done);
    /// assert_eq!(&body[..out.written], b"hello");
    /// ```
    pub fn new(max_body: u64, max_trailers: usize) -> Self {
        ChunkedDecoder {
            state: State::Size,
            remaining: 0,
            line: 0,
            total: 0,
            max_body,
            trailer_len: 0,
            max_trailers,
            trailer_start: None,
        }
    }

    /// Ready for a new body with the same limits.
    pub fn reset(&mut self) {
        *self = Self::new(self.max_body, self.max_trailers);
    }

    /// Whether the whole body, trailers included, has been decoded.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Data bytes decoded so far (written out, not merely announced by a
    /// chunk size: `total` counts a chunk whole when its size line ends).
    pub fn decoded_len(&self) -> u64 {
        if self.state == State::Data {
            self.total - self.remaining
        } else {
            self.total
        }
    }

    /// Where the trailer section began (the byte after the last chunk's
    /// size line), in the coordinates of the buffers passed to
    /// [`decode_in_place`](Self::decode_in_place); it ends 2 bytes (the
    /// final CRLF) before the end of the body.
    pub fn trailer_start(&self) -> Option<usize> {
        self.trailer_start
    }

    /// Decodes `buf[src..]`, writing data at `buf[dst..]` (`dst <= src`;
    /// if not, nothing is done and the call reports no progress).
    ///
    /// Decoding a whole buffer in place: `decode_in_place(buf, 0, 0)`; the
    /// data is then `buf[..written]` and `buf[read..]` is what was not
    /// decoded yet (move it after the data before the next call, or keep
    /// calling with the advanced `dst` and `src`).
    pub fn decode_in_place(
        &mut self,
        buf: &mut [u8],
        dst: usize,
        src: usize,
    ) -> Result<Decoded, Error> {
        if dst > src || src > buf.len() {
            return Ok(Decoded {
                read: 0,
                written: 0,
                done: self.state == State::Done,
            });
        }
        let mut i = src;
        let mut d = dst;
        let end = buf.len();
        while i < end {
            if self.state == State::Data {
                let n = (end - i).min(self.remaining.min(usize::MAX as u64) as usize);
                if d != i {
                    buf.copy_within(i..i + n, d);
                }
                i += n;
                d += n;
                self.remaining -= n as u64;
                if self.remaining == 0 {
                    self.state = State::DataCr;
                }
                continue;
            }
            let c = buf[i];
            i += 1;
            self.step(c, i)?;
            if self.state == State::Done {
                break;
            }
        }
        Ok(Decoded {
            read: i - src,
            written: d - dst,
            done: self.state == State::Done,
        })
    }

    /// One byte of a size, extension or trailer line; `next` is the index
    /// after it.
    #[inline]
    fn step(&mut self, c: u8, next: usize) -> Result<(), Error> {
        match self.state {
            State::Size => {
                self.line += 1;
                if let Some(v) = hex_val(c) {
                    if self.remaining > u64::MAX >> 4 {
                        return Err(Error::ChunkSizeOverflow);
                    }
                    self.remaining = (self.remaining << 4) | u64::from(v);
                    if self.line > MAX_CHUNK_LINE {
                        return Err(Error::InvalidChunkExtension);
                    }
                    return Ok(());
                }
                if self.line == 1 {
                    return Err(Error::InvalidChunkSize);
                }
                self.after_size(c)
            }
            State::SizeWs => {
                self.line += 1;
                if self.line > MAX_CHUNK_LINE {
                    return Err(Error::InvalidChunkExtension);
                }
                self.after_size(c)
            }
            State::Ext => {
                self.line += 1;
                if self.line > MAX_CHUNK_LINE {
                    return Err(Error::InvalidChunkExtension);
                }
                match c {
                    b'\r' => self.state = State::SizeLf,
                    b'\n' => return Err(Error::InvalidChunkLineEnding),
                    b'\t' => {}
                    0 => return Err(Error::NulByte),
                    c if c < 0x20 || c == 0x7f => return Err(Error::InvalidChunkExtension),
                    _ => {}
                }
                Ok(())
            }
            State::SizeLf => {
                if c != b'\n' {
                    return Err(Error::InvalidChunkLineEnding);
                }
                self.line = 0;
                if self.remaining == 0 {
                    self.state = State::TrailerStart;
                    self.trailer_start = Some(next);
                } else {
                    if self.remaining > self.max_body - self.total.min(self.max_body) {
                        return Err(Error::BodyTooLarge);
                    }
                    self.total += self.remaining;
                    self.state = State::Data;
                }
                Ok(())
            }
            State::Data => Ok(()), // handled in bulk by the caller
            State::DataCr => match c {
                b'\r' => {
                    self.state = State::DataLf;
                    Ok(())
                }
                _ => Err(Error::InvalidChunkLineEnding),
            },
            State::DataLf => match c {
                b'\n' => {
                    self.state = State::Size;
                    Ok(())
                }
                _ => Err(Error::InvalidChunkLineEnding),
            },
            State::TrailerStart
            | State::TrailerName
            | State::TrailerValue
            | State::TrailerLf
            | State::EndLf => self.trailer(c),
            State::Done => Ok(()),
        }
    }

    /// A byte after at least one size digit.
    #[inline]
    fn after_size(&mut self, c: u8) -> Result<(), Error> {
        match c {
            b' ' | b'\t' => self.state = State::SizeWs,
            b';' => self.state = State::Ext,
            b'\r' => self.state = State::SizeLf,
            b'\n' => return Err(Error::InvalidChunkLineEnding),
            _ => return Err(Error::InvalidChunkSize),
        }
        Ok(())
    }

    fn trailer(&mut self, c: u8) -> Result<(), Error> {
        self.trailer_len += 1;
        if self.trailer_len > self.max_trailers {
            return Err(Error::TrailersTooLarge);
        }
        if c == 0 {
            return Err(Error::NulByte);
        }
        match self.state {
            State::TrailerStart => match c {
                b'\r' => self.state = State::EndLf,
                b' ' | b'\t' => return Err(Error::ObsFold),
                c if super::syntax::is_token(&[c]) => self.state = State::TrailerName,
                _ => return Err(Error::InvalidTrailer),
            },
            State::TrailerName => match c {
                b':' => self.state = State::TrailerValue,
                c if super::syntax::is_token(&[c]) => {}
                _ => return Err(Error::InvalidTrailer),
            },
            State::TrailerValue => match c {
                b'\r' => self.state = State::TrailerLf,
                b'\t' => {}
                c if c < 0x20 || c == 0x7f => return Err(Error::InvalidTrailer),
                _ => {}
            },
            State::TrailerLf => match c {
                b'\n' => self.state = State::TrailerStart,
                _ => return Err(Error::InvalidChunkLineEnding),
            },
            State::EndLf => match c {
                b'\n' => self.state = State::Done,
                _ => return Err(Error::InvalidChunkLineEnding),
            },
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Decodes `input` fed in pieces of `step` bytes, the way a reader does
    /// (data kept at the front, undecoded bytes after it).
    fn decode_stepwise(input: &[u8], step: usize) -> Result<(Vec<u8>, usize), Error> {
        let mut buf = Vec::new();
        let mut dec = ChunkedDecoder::default();
        let (mut dst, mut src) = (0, 0);
        for piece in input.chunks(step.max(1)) {
            buf.extend_from_slice(piece);
            let r = dec.decode_in_place(&mut buf, dst, src)?;
            dst += r.written;
            src += r.read;
            if r.done {
                return Ok((buf[..dst].to_vec(), src));
            }
        }
        Err(Error::UnexpectedEof)
    }

    #[test]
    fn decodes_with_extensions_and_trailers_at_any_split() {
        let input = b"5;name=\"v\"\r\nhello\r\n1A \t; a=b\r\n abcdefghijklmnopqrstuvwxy\r\n0\r\nExpires: never\r\nX-T: 1\r\n\r\nNEXT";
        for step in 1..input.len() {
            let (body, used) = decode_stepwise(input, step).unwrap();
            assert_eq!(body, b"hello abcdefghijklmnopqrstuvwxy", "step {step}");
            assert_eq!(&input[used..], b"NEXT");
        }
        let mut buf = input.to_vec();
        let mut dec = ChunkedDecoder::default();
        let r = dec.decode_in_place(&mut buf, 0, 0).unwrap();
        assert!(r.done && dec.is_done());
        let t = dec.trailer_start().unwrap();
        assert_eq!(&buf[t..r.read - 2], b"Expires: never\r\nX-T: 1\r\n");
        assert_eq!(dec.decoded_len(), 31);
    }

    /// Found by fuzzing (http_chunked): in the middle of a chunk,
    /// `decoded_len` counted the whole announced chunk.
    #[test]
    fn decoded_len_counts_only_bytes_written() {
        let mut buf = b"5\r\nhel".to_vec();
        let mut dec = ChunkedDecoder::default();
        let r = dec.decode_in_place(&mut buf, 0, 0).unwrap();
        assert_eq!((r.written, r.done), (3, false));
        assert_eq!(dec.decoded_len(), 3);
        buf.extend_from_slice(b"lo\r\n0\r\n\r\n");
        let r2 = dec.decode_in_place(&mut buf, r.written, r.read).unwrap();
        assert!(r2.done);
        assert_eq!(dec.decoded_len(), 5);
        assert_eq!(&buf[..5], b"hello");
    }

    #[test]
    fn malformed_chunks_are_typed_errors() {
        let cases: &[(&[u8], Error)] = &[
            (b"x\r\n", Error::InvalidChunkSize),
            (b";ext\r\n", Error::InvalidChunkSize),
            (b"\r\n", Error::InvalidChunkSize),
            (b"5x\r\nhello\r\n", Error::InvalidChunkSize),
            (b"-5\r\n", Error::InvalidChunkSize),
            (b"0x5\r\n", Error::InvalidChunkSize),
            (b"5 6\r\n", Error::InvalidChunkSize),
            (b"10000000000000000\r\n", Error::ChunkSizeOverflow),
            (b"ffffffffffffffff0\r\n", Error::ChunkSizeOverflow),
            (b"5\nhello\r\n", Error::InvalidChunkLineEnding),
            (b"5\rhello\r\n", Error::InvalidChunkLineEnding),
            (b"5\r\nhelloX\r\n", Error::InvalidChunkLineEnding),
            (b"5\r\nhello\rX", Error::InvalidChunkLineEnding),
            (b"5\r\nhello\n0\r\n\r\n", Error::InvalidChunkLineEnding),
            (b"5;a\x01b\r\n", Error::InvalidChunkExtension),
            (b"5;a\0b\r\n", Error::NulByte),
            (b"0\r\n folded\r\n\r\n", Error::ObsFold),
            (b"0\r\nBad Name: x\r\n\r\n", Error::InvalidTrailer),
            (b"0\r\nX: a\x01\r\n\r\n", Error::InvalidTrailer),
            (b"0\r\nX: a\0\r\n\r\n", Error::NulByte),
            (b"0\r\nX: a\r\n\rX", Error::InvalidChunkLineEnding),
        ];
        for (input, want) in cases {
            for step in [1, 3, input.len()] {
                assert_eq!(
                    decode_stepwise(input, step),
                    Err(*want),
                    "{}",
                    input.escape_ascii()
                );
            }
        }
        let long: Vec<u8> = b"1;"
            .iter()
            .copied()
            .chain(core::iter::repeat_n(b'a', MAX_CHUNK_LINE))
            .collect();
        assert_eq!(
            decode_stepwise(&long, 1000),
            Err(Error::InvalidChunkExtension)
        );
    }

    #[test]
    fn limits() {
        let mut dec = ChunkedDecoder::new(8, 16);
        let mut buf = b"5\r\nhello\r\n4\r\nabcd\r\n".to_vec();
        assert_eq!(
            dec.decode_in_place(&mut buf, 0, 0),
            Err(Error::BodyTooLarge)
        );
        let mut dec = ChunkedDecoder::new(8, 16);
        let mut buf = b"0\r\nX-Long-Trailer: 123456\r\n\r\n".to_vec();
        assert_eq!(
            dec.decode_in_place(&mut buf, 0, 0),
            Err(Error::TrailersTooLarge)
        );
        let mut dec = ChunkedDecoder::default();
        let mut buf = b"0\r\n\r\n".to_vec();
        assert_eq!(dec.decode_in_place(&mut buf, 1, 0).unwrap().read, 0);
        let r = dec.decode_in_place(&mut buf, 0, 0).unwrap();
        assert_eq!((r.read, r.written, r.done), (5, 0, true));
        dec.reset();
        assert!(!dec.is_done());
    }
}
