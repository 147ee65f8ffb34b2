//! permessage-deflate negotiation against Python websockets' own (its
//! `ClientPerMessageDeflateFactory` / `ServerPerMessageDeflateFactory` and header parser and
//! builder), the handshake half of issue 25's interop, before a connection drives it:
//! - our client's offer, for many configs, answered by a websockets server factory of
//!   several configs: we accept its answer, with the parameters it chose;
//! - websockets' client offers, answered by our server: websockets accepts our answer,
//!   with the parameters we chose.
//!
//! Python websockets comes from the venv `conformance/websockets/setup.sh` makes under
//! `<target>/websockets-venv` (or `$TICKWIRE_WEBSOCKETS_PYTHON`); without it the test skips
//! loudly, unless `TICKWIRE_REQUIRE_PEERS` is set (CI).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use tickwire_codec::ws::deflate::{DeflateConfig, Negotiated};
use tickwire_conformance::websockets_python;

/// Reads `mode` then lines of requests on stdin; one answer line per request.
/// - `server <json factory kwargs> <offer header>`: `OK <answer header>` or `DECLINE`, then
///   ` | rnct lnct rbits lbits` of the server's extension (remote = the client).
/// - `client <json factory kwargs> <answer header>`: websockets' client factory processes our
///   answer: `OK lnct rnct lbits rbits` (local = the client) or `ERR message`.
/// - `offer <json factory kwargs>`: the client factory's offer header.
const SCRIPT: &str = r#"
import json, sys
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory, ServerPerMessageDeflateFactory)
from websockets.headers import build_extension, parse_extension

def bits(b):
    return 15 if b is None else b

for line in sys.stdin:
    op, kwargs, header = (line.rstrip("\n").split("\t") + [""])[:3]
    kwargs = json.loads(kwargs)
    try:
        if op == "offer":
            f = ClientPerMessageDeflateFactory(**kwargs)
            print("OK", build_extension([(f.name, f.get_request_params())]))
        elif op == "server":
            f = ServerPerMessageDeflateFactory(**kwargs)
            (name, params), = parse_extension(header)
            assert name == f.name
            try:
                answer, ext = f.process_request_params(params, [])
            except Exception:
                print("DECLINE")
                continue
            print("OK", build_extension([(f.name, answer)]), "|",
                  int(ext.remote_no_context_takeover), int(ext.local_no_context_takeover),
                  bits(ext.remote_max_window_bits), bits(ext.local_max_window_bits))
        else:
            f = ClientPerMessageDeflateFactory(**kwargs)
            (name, params), = parse_extension(header)
            ext = f.process_response_params(params, [])
            print("OK", int(ext.local_no_context_takeover), int(ext.remote_no_context_takeover),
                  bits(ext.local_max_window_bits), bits(ext.remote_max_window_bits))
    except Exception as e:
        print("ERR", type(e).__name__, str(e).replace("\n", " "))
    sys.stdout.flush()
"#;

/// One request line per element; the answers, in order.
fn ask(py: &PathBuf, requests: &[String]) -> Vec<String> {
    let mut child = Command::new(py)
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python");
    {
        let mut stdin = child.stdin.take().unwrap();
        for r in requests {
            writeln!(stdin, "{r}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), requests.len(), "{lines:?}");
    lines
}

/// Our configs, as a client or a server.
fn our_configs() -> Vec<DeflateConfig> {
    let mut v = Vec::new();
    for (c, s) in [(15, 15), (12, 15), (15, 10), (8, 8), (9, 12)] {
        for (cn, sn) in [(false, false), (true, false), (false, true), (true, true)] {
            v.push(DeflateConfig {
                client_max_window_bits: c,
                server_max_window_bits: s,
                client_no_context_takeover: cn,
                server_no_context_takeover: sn,
                ..DeflateConfig::default()
            });
        }
    }
    v
}

/// websockets factory settings (keyword arguments, JSON), for a server. (Its factories take
/// no window of 8 bits in their own settings; they do in a peer's offer or answer.)
const THEIR_SERVERS: &[&str] = &[
    "{}",
    r#"{"server_max_window_bits": 11, "client_max_window_bits": 9}"#,
    r#"{"server_no_context_takeover": true, "client_no_context_takeover": true}"#,
    r#"{"server_max_window_bits": 9}"#,
];

/// websockets factory settings, for a client.
const THEIR_CLIENTS: &[&str] = &[
    "{}",
    r#"{"client_max_window_bits": 10}"#,
    r#"{"client_max_window_bits": null, "server_max_window_bits": 9}"#,
    r#"{"server_no_context_takeover": true, "client_no_context_takeover": true}"#,
    r#"{"server_max_window_bits": 12, "client_max_window_bits": 9}"#,
];

fn ints(s: &str) -> Vec<u8> {
    s.split_whitespace().map(|x| x.parse().unwrap()).collect()
}

#[test]
fn our_client_offers_their_server_answers() {
    let Some(py) = websockets_python("deflate_websockets") else {
        return;
    };
    let configs = our_configs();
    let mut requests = Vec::new();
    for c in &configs {
        for s in THEIR_SERVERS {
            requests.push(format!("server\t{s}\t{}", c.offer().as_str()));
        }
    }
    let answers = ask(&py, &requests);
    let mut accepted = 0;
    for (i, a) in answers.iter().enumerate() {
        let config = &configs[i / THEIR_SERVERS.len()];
        let what = format!(
            "{} / {}: {a}",
            requests[i],
            THEIR_SERVERS[i % THEIR_SERVERS.len()]
        );
        if a == "DECLINE" {
            continue;
        }
        let (header, theirs) = a
            .strip_prefix("OK ")
            .and_then(|a| a.split_once(" | "))
            .unwrap_or_else(|| panic!("{what}"));
        let n = config
            .check_response([header.as_bytes()])
            .unwrap_or_else(|e| panic!("{what}: we refused their answer: {e}"))
            .unwrap_or_else(|| panic!("{what}: no answer"));
        // Their server's view: remote = our client.
        let t = ints(theirs);
        let (client_nct, server_nct, client_bits, server_bits) = (t[0] == 1, t[1] == 1, t[2], t[3]);
        // We compress within what they inflate with, and reset when they expect it.
        assert!(n.client_max_window_bits <= client_bits, "{what}: {n:?}");
        assert!(n.client_no_context_takeover || !client_nct, "{what}: {n:?}");
        // We inflate what they send as they send it.
        assert_eq!(n.server_max_window_bits, server_bits, "{what}: {n:?}");
        assert_eq!(n.server_no_context_takeover, server_nct, "{what}: {n:?}");
        accepted += 1;
    }
    eprintln!("{accepted} of {} offers accepted", answers.len());
    assert!(
        accepted * 2 > answers.len(),
        "only {accepted} of {} accepted",
        answers.len()
    );
}

#[test]
fn their_client_offers_our_server_answers() {
    let Some(py) = websockets_python("deflate_websockets") else {
        return;
    };
    let offers: Vec<String> = THEIR_CLIENTS
        .iter()
        .map(|c| format!("offer\t{c}"))
        .collect();
    let offers: Vec<String> = ask(&py, &offers)
        .into_iter()
        .map(|o| {
            o.strip_prefix("OK ")
                .unwrap_or_else(|| panic!("{o}"))
                .to_string()
        })
        .collect();
    let configs = our_configs();
    let mut requests = Vec::new();
    let mut chosen: Vec<Negotiated> = Vec::new();
    for config in &configs {
        for (their, offer) in THEIR_CLIENTS.iter().zip(&offers) {
            let n = config
                .accept([offer.as_bytes()])
                .unwrap_or_else(|| panic!("we declined their offer {offer}"));
            requests.push(format!("client\t{their}\t{}", n.response().as_str()));
            chosen.push(n);
        }
    }
    for ((a, n), r) in ask(&py, &requests).iter().zip(&chosen).zip(&requests) {
        let theirs = a
            .strip_prefix("OK ")
            .unwrap_or_else(|| panic!("{r}: they refused our answer: {a}"));
        // Their client's view: local = the client.
        let t = ints(theirs);
        let (client_nct, server_nct, client_bits, server_bits) = (t[0] == 1, t[1] == 1, t[2], t[3]);
        assert_eq!(n.client_no_context_takeover, client_nct, "{r}: {a}");
        assert_eq!(n.server_no_context_takeover, server_nct, "{r}: {a}");
        // They compress within the window we inflate with; we within theirs.
        assert!(client_bits <= n.client_max_window_bits, "{r}: {a}");
        assert_eq!(n.server_max_window_bits, server_bits, "{r}: {a}");
    }
}
