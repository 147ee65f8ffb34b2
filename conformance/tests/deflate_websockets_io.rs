//! permessage-deflate over real sockets on 127.0.0.1 against Python websockets (issue 25's
//! interop): compressed messages both ways, under several parameter sets (context takeover
//! on and off, small windows).
//! - A websockets server with compression echoes; our client sends text and binary
//!   messages of many sizes and checks every echo (our deflate → their inflate → their
//!   deflate → our inflate).
//! - Our server with compression echoes; a websockets client sends the same messages and
//!   checks every echo, and reports what it negotiated.
//!
//! Python websockets comes from the venv `conformance/websockets/setup.sh` makes under
//! `<target>/websockets-venv` (or `$TICKWIRE_WEBSOCKETS_PYTHON`); without it the test skips
//! loudly, unless `TICKWIRE_REQUIRE_PEERS` is set (CI).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use tickwire::codec::ws::deflate::{DeflateConfig, Negotiated};
use tickwire::ws::{Client, Message, Server};
use tickwire_conformance::websockets_python;

/// `server <json kwargs>`: a websockets echo server with
/// `ServerPerMessageDeflateFactory(**kwargs)`; prints `PORT n`, then for each connection
/// `EXT <repr of its extensions>` on stderr.
/// `client <port> <json kwargs> <count>`: a websockets client with
/// `ClientPerMessageDeflateFactory(**kwargs)` sends `count` messages (text and binary,
/// sizes as `sizes()` here), checks each echo, then prints `OK <extension params>` or
/// `ERR ...`.
const SCRIPT: &str = r#"
import asyncio, json, sys
from websockets.asyncio.server import serve
from websockets.asyncio.client import connect
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory, ServerPerMessageDeflateFactory)

def message(i):
    n = [0, 1, 50, 64, 100, 300, 1000, 4000, 20000, 70000][i % 10]
    body = "".join('{"px":%d,"qty":%d,"side":"buy"},' % ((i * 31 + k) % 997, k % 13)
                   for k in range(n // 20 + 1))[:n]
    return body if i % 2 == 0 else body.encode()

def ext_line(exts):
    e = [x for x in exts if x.name == "permessage-deflate"]
    if not e:
        return "none"
    e = e[0]
    return "%d %d %s %s" % (e.local_no_context_takeover, e.remote_no_context_takeover,
                            e.local_max_window_bits, e.remote_max_window_bits)

async def echo(ws):
    print("EXT", ext_line(ws.protocol.extensions), file=sys.stderr, flush=True)
    async for m in ws:
        await ws.send(m)

async def server(kwargs):
    async with serve(echo, "127.0.0.1", 0, compression=None,
                     extensions=[ServerPerMessageDeflateFactory(**kwargs)],
                     max_size=1 << 20) as s:
        port = s.sockets[0].getsockname()[1]
        print("PORT", port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

async def client(port, kwargs, count):
    async with connect("ws://127.0.0.1:%d/" % port, compression=None,
                       extensions=[ClientPerMessageDeflateFactory(**kwargs)],
                       max_size=1 << 20) as ws:
        for i in range(count):
            m = message(i)
            await ws.send(m)
            got = await ws.recv()
            if got != m:
                print("ERR message", i, "came back different", flush=True)
                return
        print("OK", ext_line(ws.protocol.extensions), flush=True)

mode = sys.argv[1]
if mode == "server":
    asyncio.run(server(json.loads(sys.argv[2])))
else:
    asyncio.run(client(int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])))
"#;

/// Messages per connection (both kinds, every size below, several times over).
const COUNT: usize = 40;

/// The message `i`, as the script's `message(i)` makes it: (is text, bytes).
fn message(i: usize) -> (bool, Vec<u8>) {
    let n = [0, 1, 50, 64, 100, 300, 1000, 4000, 20000, 70000][i % 10];
    let mut body = String::new();
    for k in 0..n / 20 + 1 {
        body.push_str(&format!(
            "{{\"px\":{},\"qty\":{},\"side\":\"buy\"}},",
            (i * 31 + k) % 997,
            k % 13
        ));
    }
    body.truncate(n);
    (i.is_multiple_of(2), body.into_bytes())
}

/// A websockets server process; killed on drop.
struct PyServer {
    child: Child,
    port: u16,
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn py_server(py: &PathBuf, kwargs: &str) -> PyServer {
    let mut child = Command::new(py)
        .args(["-c", SCRIPT, "server", kwargs])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .strip_prefix("PORT ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("websockets server did not start: {line:?}"));
    PyServer { child, port }
}

/// (our config, their factory kwargs, what we expect negotiated: client and server
/// no-context-takeover, client and server window bits).
type Case = (DeflateConfig, &'static str, (bool, bool, u8, u8));

fn cases() -> Vec<Case> {
    let d = DeflateConfig::default();
    vec![
        // Context takeover both ways, full windows.
        (d, "{}", (false, false, 15, 15)),
        // We ask for no context takeover both ways.
        (
            DeflateConfig {
                client_no_context_takeover: true,
                server_no_context_takeover: true,
                ..d
            },
            "{}",
            (true, true, 15, 15),
        ),
        // They ask for no context takeover both ways.
        (
            d,
            r#"{"server_no_context_takeover": true, "client_no_context_takeover": true}"#,
            (true, true, 15, 15),
        ),
        // Small windows, from our side.
        (
            DeflateConfig {
                client_max_window_bits: 9,
                server_max_window_bits: 9,
                ..d
            },
            "{}",
            (false, false, 9, 9),
        ),
        // Small windows, from theirs.
        (
            d,
            r#"{"server_max_window_bits": 10, "client_max_window_bits": 9}"#,
            (false, false, 9, 10),
        ),
    ]
}

/// What a case expects of negotiated parameters.
fn params(n: &Negotiated) -> (bool, bool, u8, u8) {
    (
        n.client_no_context_takeover,
        n.server_no_context_takeover,
        n.client_max_window_bits,
        n.server_max_window_bits,
    )
}

#[test]
fn our_client_against_a_compressing_websockets_server() {
    let Some(py) = websockets_python("deflate_websockets_io") else {
        return;
    };
    client_cases(&py, cases(), 0);
}

/// Our client splits its messages into frames of at most 1000 bytes: the large ones go
/// out compressed once, the compressed bytes split (RSV1 on the first frame only), and
/// websockets inflates them whole.
#[test]
fn our_fragmenting_client_against_a_compressing_websockets_server() {
    let Some(py) = websockets_python("deflate_websockets_io") else {
        return;
    };
    client_cases(&py, cases().into_iter().take(2).collect(), 1000);
}

/// Each case against a fresh websockets server, our client's fragment size `fragment`.
fn client_cases(py: &PathBuf, cases: Vec<Case>, fragment: usize) {
    for (config, kwargs, want) in cases {
        let server = py_server(py, kwargs);
        let what = format!("{config:?} against {kwargs}, fragment size {fragment}");
        let mut c = Client::builder()
            .deflate(config)
            .fragment_size(fragment)
            .read_timeout(Some(Duration::from_secs(20)))
            .connect(&format!("ws://127.0.0.1:{}/", server.port))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let n = c
            .deflate()
            .unwrap_or_else(|| panic!("{what}: not negotiated"));
        assert_eq!(params(&n), want, "{what}");
        for i in 0..COUNT {
            let (text, bytes) = message(i);
            if text {
                c.send_text(std::str::from_utf8(&bytes).unwrap()).unwrap();
            } else {
                c.send_binary(&bytes).unwrap();
            }
            match c
                .recv()
                .unwrap_or_else(|e| panic!("{what}: message {i}: {e}"))
            {
                Some(Message::Text(t)) if text => {
                    assert_eq!(t.as_bytes(), &bytes[..], "{what}: {i}")
                }
                Some(Message::Binary(b)) if !text => assert_eq!(b, &bytes[..], "{what}: {i}"),
                other => panic!("{what}: message {i}: {other:?}"),
            }
        }
        c.close(tickwire::ws::CloseCode::NORMAL, "").unwrap();
        while let Ok(Some(_)) = c.recv() {}
    }
}

#[test]
fn a_websockets_client_against_our_compressing_server() {
    let Some(py) = websockets_python("deflate_websockets_io") else {
        return;
    };
    server_cases(&py, cases(), 0);
}

/// Our server splits its echoes into frames of at most 1000 bytes (compressed once,
/// then split); the websockets client inflates them whole.
#[test]
fn a_websockets_client_against_our_fragmenting_server() {
    let Some(py) = websockets_python("deflate_websockets_io") else {
        return;
    };
    server_cases(&py, cases().into_iter().take(2).collect(), 1000);
}

/// Each case: our echo server (fragment size `fragment`), a websockets client.
fn server_cases(py: &PathBuf, cases: Vec<Case>, fragment: usize) {
    for (config, kwargs, want) in cases {
        let what = format!("{config:?} against {kwargs}, fragment size {fragment}");
        let mut server = Server::builder()
            .deflate(config)
            .fragment_size(fragment)
            .read_timeout(Some(Duration::from_secs(20)))
            .bind("127.0.0.1:0")
            .unwrap();
        let port = server.local_addr().unwrap().port();
        let echo = thread::spawn(move || {
            let mut conn = server.accept().unwrap();
            conn.handshake().unwrap();
            let negotiated = conn.deflate();
            let mut scratch = Vec::new();
            loop {
                let text = match conn.recv() {
                    Ok(Some(Message::Text(t))) => {
                        scratch.clear();
                        scratch.extend_from_slice(t.as_bytes());
                        true
                    }
                    Ok(Some(Message::Binary(b))) => {
                        scratch.clear();
                        scratch.extend_from_slice(b);
                        false
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => return negotiated,
                };
                let sent = if text {
                    conn.send_text(std::str::from_utf8(&scratch).unwrap())
                } else {
                    conn.send_binary(&scratch)
                };
                if sent.is_err() {
                    return negotiated;
                }
            }
        });
        let out = Command::new(py)
            .args(["-c", SCRIPT, "client", &port.to_string(), kwargs])
            .arg(COUNT.to_string())
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let n = echo
            .join()
            .unwrap()
            .unwrap_or_else(|| panic!("{what}: not negotiated ({line})"));
        assert_eq!(params(&n), want, "{what}");
        // Their view: local = their client, remote = our server.
        let (cn, sn, cb, sb) = want;
        let theirs = format!("OK {} {} {cb} {sb}", u8::from(cn), u8::from(sn));
        assert_eq!(line, theirs, "{what}");
    }
}

#[test]
fn script_and_test_make_the_same_messages() {
    // The Python side checks its echoes against its own `message(i)`, ours against
    // ours; both must be the same bytes for the two tests to check both directions.
    let Some(py) = websockets_python("deflate_websockets_io") else {
        return;
    };
    let mut child = Command::new(&py)
        .args([
            "-c",
            &format!(
                "{}\nimport sys\nfor i in range({COUNT}):\n    m = message(i)\n    sys.stdout.write((m if isinstance(m, str) else m.decode()) + '\\n')",
                SCRIPT.split("mode = sys.argv[1]").next().unwrap()
            ),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    child.wait().unwrap();
    let lines: Vec<&str> = out.split('\n').take(COUNT).collect();
    assert_eq!(lines.len(), COUNT);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line.as_bytes(), &message(i).1[..], "message {i}");
    }
}
