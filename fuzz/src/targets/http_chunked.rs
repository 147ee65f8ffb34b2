//! ChunkedDecoder alone. Input: byte 0 seeds the split points and re-chunk sizes, bytes 1-2
//! are the body limit (u16 LE, 0xFFFF = unlimited), the rest is a chunked body. Checks:
//! decoding in place as the bytes arrive in pieces gives the same data, bytes read, end and
//! error as decoding the whole input at once; the output is never longer than what was read;
//! and re-chunking the decoded data (other chunk sizes, with extensions) decodes back to the
//! same bytes.
use tickwire_codec::http::{ChunkedDecoder, Error};

#[derive(Debug, PartialEq, Eq)]
struct Out {
    data: Vec<u8>,
    read: usize,
    done: bool,
    err: Option<Error>,
}

/// Decode `input` in place, the bytes arriving in pieces of `sizes()` (usize::MAX: whole).
fn decode(input: &[u8], max_body: u64, mut sizes: impl FnMut() -> usize) -> Out {
    let mut buf = input.to_vec();
    let mut dec = ChunkedDecoder::new(max_body, 1024);
    let (mut dst, mut src, mut avail) = (0usize, 0usize, 0usize);
    loop {
        avail = avail.saturating_add(sizes()).min(buf.len());
        match dec.decode_in_place(&mut buf[..avail], dst, src) {
            Ok(d) => {
                assert!(d.read <= avail - src, "read past the bytes given");
                assert!(d.written <= d.read, "wrote more than it read");
                dst += d.written;
                src += d.read;
                assert!(dst <= src);
                assert_eq!(dec.decoded_len(), dst as u64, "decoded_len disagrees");
                assert!(dst as u64 <= max_body, "decoded past the limit");
                // Done, or all bytes given and no more progress: needs more.
                if d.done || (avail == buf.len() && d.read == 0) {
                    return Out {
                        data: buf[..dst].to_vec(),
                        read: src,
                        done: d.done,
                        err: None,
                    };
                }
            }
            // How far earlier calls got depends on the pieces: only the error is compared.
            Err(e) => {
                return Out {
                    data: Vec::new(),
                    read: 0,
                    done: false,
                    err: Some(e),
                };
            }
        }
    }
}

fn sizes_from(seed: u8) -> impl FnMut() -> usize {
    let mut s = u32::from(seed) | 0x100;
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s % 17) as usize + 1
    }
}

/// One input of the fuzz target `http_chunked` (see the module docs).
pub fn run(input: &[u8]) {
    let Some(([seed, lo, hi], body)) = input.split_first_chunk::<3>().map(|(h, b)| (*h, b)) else {
        return;
    };
    let max_body = match u16::from_le_bytes([lo, hi]) {
        0xFFFF => u64::MAX,
        n => u64::from(n),
    };
    let whole = decode(body, max_body, || usize::MAX);
    let pieces = decode(body, max_body, sizes_from(seed));
    assert_eq!(whole, pieces, "whole vs pieces differ");
    if body.len() <= 2048 {
        assert_eq!(
            whole,
            decode(body, max_body, || 1),
            "whole vs byte at a time differ"
        );
    }
    if whole.done {
        // Re-chunk the data with other sizes and an extension on every chunk.
        let mut next = sizes_from(seed.wrapping_add(1));
        let mut wire = Vec::new();
        let mut rest = &whole.data[..];
        while !rest.is_empty() {
            let n = next().min(rest.len());
            wire.extend_from_slice(format!("{n:x};k=v\r\n").as_bytes());
            wire.extend_from_slice(&rest[..n]);
            wire.extend_from_slice(b"\r\n");
            rest = &rest[n..];
        }
        wire.extend_from_slice(b"0\r\n\r\n");
        let again = decode(&wire, max_body, sizes_from(seed));
        assert_eq!(again.err, None, "re-chunked body refused");
        assert!(
            again.done && again.read == wire.len(),
            "re-chunked body not complete"
        );
        assert_eq!(
            again.data, whole.data,
            "re-chunked body decodes differently"
        );
    }
}
