//! The proxy environment variables, read only when a builder says `.proxy_from_env()`:
//! `http_proxy` (tinyproxy) for `ws://`, `HTTPS_PROXY` (microsocks) for `wss://` and
//! `https://`, `NO_PROXY` for targets that go direct. The only test of this binary, as it
//! sets the process environment.

use std::thread;

use tickwire::proxy::ProxyRules;
use tickwire::ws::{self, Message};
use tickwire_conformance::{Microsocks, Tinyproxy, skip_or_fail};
#[path = "../../transport/tests/tls_util/mod.rs"]
mod tls_util;
use tls_util::Ca;

/// A tickwire echo server (TLS with `ca`'s `localhost` certificate when given) that
/// accepts connections until the test ends; its port.
fn echo_server(ca: Option<&Ca>) -> u16 {
    let mut b = ws::ServerBuilder::new();
    if let Some(ca) = ca {
        b = b.tls(ca.server(&["localhost", "127.0.0.1"]).server_config());
    }
    let mut srv = b.bind("127.0.0.1:0").unwrap();
    let port = srv.local_addr().unwrap().port();
    thread::spawn(move || {
        while let Ok(mut c) = srv.accept() {
            while let Ok(Some(m)) = c.recv() {
                if let Message::Text(t) = m {
                    let t = t.to_owned();
                    let _ = c.send_text(&t);
                }
            }
        }
    });
    port
}

/// Connect with `b`, echo once, and return the port of the socket's peer.
fn peer_port(b: &ws::ClientBuilder, url: &str) -> u16 {
    let mut c = b.connect(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    c.send_text("env").unwrap();
    assert!(matches!(c.recv().unwrap(), Some(Message::Text("env"))));
    c.peer_addr().unwrap().port()
}

#[test]
fn proxies_from_the_environment_only_when_asked() {
    let test = "proxies_from_the_environment_only_when_asked";
    let Some(tiny) = skip_or_fail(test, Tinyproxy::start()) else {
        return;
    };
    let Some(socks) = skip_or_fail(test, Microsocks::start(None)) else {
        return;
    };
    // SAFETY: this binary holds this one test, and nothing else in the process reads
    // or writes the environment while it is set (the servers above are child
    // processes, started already).
    unsafe {
        std::env::set_var("http_proxy", tiny.url());
        std::env::set_var("HTTPS_PROXY", socks.url());
        std::env::set_var("NO_PROXY", "example.invalid, 127.0.0.0/8");
        std::env::remove_var("ALL_PROXY");
        std::env::remove_var("all_proxy");
    }
    let ca = Ca::new("tickwire proxy env test CA");
    let plain = echo_server(None);
    let tls = echo_server(Some(&ca));

    // Not asked: direct, whatever the environment says.
    let direct = ws::ClientBuilder::new().tls(ca.client_config());
    assert_eq!(
        peer_port(&direct, &format!("ws://localhost:{plain}/")),
        plain
    );

    let from_env = ws::ClientBuilder::new()
        .tls(ca.client_config())
        .proxy_from_env()
        .unwrap();
    let via = peer_port(&from_env, &format!("ws://localhost:{plain}/"));
    assert_eq!(via, tiny.addr().port());
    assert!(
        tiny.log_text()
            .contains(&format!("CONNECT localhost:{plain}"))
    );
    let via = peer_port(&from_env, &format!("wss://localhost:{tls}/"));
    assert_eq!(via, socks.addr().port());
    // NO_PROXY's CIDR: 127.0.0.1 goes direct, for both schemes.
    assert_eq!(
        peer_port(&from_env, &format!("ws://127.0.0.1:{plain}/")),
        plain
    );
    assert_eq!(
        peer_port(&from_env, &format!("wss://127.0.0.1:{tls}/")),
        tls
    );

    // The same rules, as a value.
    let rules = ProxyRules::from_env().unwrap();
    assert_eq!(
        rules.for_target("localhost", 443, true).map(|p| p.port()),
        Some(socks.addr().port())
    );
    assert!(rules.for_target("example.invalid", 80, false).is_none());
}
