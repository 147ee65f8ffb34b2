//! RequestWriter from arbitrary parts: method, path, query pairs, headers and body taken
//! from the input (length-prefixed fields). Either a typed BuildError, or bytes that
//! RequestReader parses back, whole and alone, to the same method, path, query pairs
//! (percent-decoded equal to the originals), headers (values without surrounding
//! whitespace) and body. A CR, LF or NUL in a header name or value or in the path is always
//! refused (no header injection).
use tickwire_codec::http::{Method, RequestReader, RequestWriter, percent};

const METHODS: [Method; 6] = [
    Method::Get,
    Method::Post,
    Method::Put,
    Method::Delete,
    Method::Patch,
    Method::Head,
];

/// Reads length-prefixed fields from the input.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }
    fn field(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte()).min(self.0.len());
        let (f, rest) = self.0.split_at(n);
        self.0 = rest;
        f
    }
    fn text(&mut self) -> String {
        String::from_utf8_lossy(self.field()).into_owned()
    }
}

fn injects(s: &str) -> bool {
    s.bytes().any(|c| matches!(c, b'\r' | b'\n' | 0))
}

fn decode(s: &str) -> Vec<u8> {
    let mut out = vec![0u8; s.len()];
    let n = percent::decode_into(s.as_bytes(), &mut out).expect("own query not decodable");
    out.truncate(n);
    out
}

/// One input of the fuzz target `http_request_writer` (see the module docs).
pub fn run(input: &[u8]) {
    let mut c = Cursor(input);
    let flags = c.byte();
    let method = METHODS[usize::from(flags % 6)];
    let path = c.text();
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..c.byte() % 5)
        .map(|_| (c.field().to_vec(), c.field().to_vec()))
        .collect();
    let headers: Vec<(String, String)> = (0..c.byte() % 5).map(|_| (c.text(), c.text())).collect();
    let body = (flags & 0x80 != 0).then_some(c.0);

    let Ok(mut w) = RequestWriter::new(vec![0u8; 4096], "example.com") else {
        panic!("a valid host refused");
    };
    let mut b = w.request(method, &path);
    for (k, v) in &pairs {
        b = b.query_bytes(k, v);
    }
    let mut f = b.header("X-Fuzz", "1");
    for (n, v) in &headers {
        f = f.header(n, v);
    }
    let built = match body {
        Some(body) => f.body(body).finish(),
        None => f.finish(),
    };
    let injected = injects(&path) || headers.iter().any(|(n, v)| injects(n) || injects(v));
    let req = match built {
        Ok(r) => r,
        Err(_) => return,
    };
    assert!(!injected, "CR/LF/NUL accepted: {path:?} {headers:?}");
    let wire = req.as_bytes().to_vec();

    let mut r: RequestReader<Vec<u8>> =
        RequestReader::new(vec![0u8; 8192]).max_body_size(usize::MAX);
    assert_eq!(r.feed(&wire), wire.len());
    let got = r
        .poll()
        .unwrap_or_else(|e| {
            panic!(
                "own request refused: {e:?} {:?}",
                String::from_utf8_lossy(&wire)
            )
        })
        .expect("own request incomplete");
    assert_eq!(
        got.as_bytes().len(),
        wire.len(),
        "request not all of the bytes"
    );
    assert_eq!(got.method(), Some(method));
    let (want_path, path_query) = path
        .split_once('?')
        .map_or((&path[..], None), |(p, q)| (p, Some(q)));
    assert_eq!(got.path(), want_path);
    if path_query.is_none() {
        let decoded: Vec<(Vec<u8>, Vec<u8>)> = got
            .query_pairs()
            .map(|(k, v)| (decode(k), decode(v)))
            .collect();
        assert_eq!(decoded, pairs, "query pairs differ");
    }
    let ours: Vec<(String, Vec<u8>)> = got
        .headers()
        .iter()
        .filter(|(n, _)| {
            !n.eq_ignore_ascii_case("host") && !n.eq_ignore_ascii_case("content-length")
        })
        .map(|(n, v)| (n.to_owned(), v.to_vec()))
        .collect();
    let mut want = vec![("X-Fuzz".to_owned(), b"1".to_vec())];
    want.extend(
        headers
            .iter()
            .map(|(n, v)| (n.clone(), v.trim_matches([' ', '\t']).as_bytes().to_vec())),
    );
    assert_eq!(ours, want, "headers differ");
    assert_eq!(got.header("host"), Some(&b"example.com"[..]));
    assert_eq!(got.body(), body.unwrap_or_default(), "body differs");
}
