//! Runs `examples/fanout_server.rs` (included as a module): three clients on 127.0.0.1
//! subscribe, the evented server sends 200 ticks to all of them from one `mio::Poll`, then
//! closes; each client gets every tick, in order, and a clean close.

#[path = "../examples/fanout_server.rs"]
mod fanout_server;

use std::thread;
use std::time::Duration;

use tickwire::ws::{Client, Message};

#[test]
fn every_subscriber_gets_every_tick_in_order() {
    const TICKS: u64 = 200;
    const CLIENTS: usize = 3;
    let server = fanout_server::server_builder().bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/", server.local_addr().unwrap());
    let opts = fanout_server::Options {
        ticks: Some(TICKS),
        interval: Duration::from_millis(1),
        wait_for: CLIENTS,
    };
    let feed = thread::spawn(move || fanout_server::serve(server, opts));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let url = url.clone();
            thread::spawn(move || {
                let b = Client::builder().read_timeout(Some(Duration::from_secs(20)));
                #[cfg(feature = "deflate")]
                let b = b.deflate(tickwire::ws::DeflateConfig::default());
                let mut c = b.connect(&url).unwrap();
                c.send_text("subscribe").unwrap();
                let mut seqs = Vec::new();
                let mut closed = false;
                while let Some(m) = c.recv().unwrap() {
                    match m {
                        Message::Text(t) => {
                            let seq = t
                                .strip_prefix(r#"{"seq":"#)
                                .and_then(|r| r.split(',').next())
                                .unwrap();
                            seqs.push(seq.parse::<u64>().unwrap());
                        }
                        Message::Close(f) => {
                            assert_eq!(f.unwrap().reason, "feed over");
                            closed = true;
                        }
                        other => panic!("{other:?}"),
                    }
                }
                assert!(closed);
                seqs
            })
        })
        .collect();
    let want: Vec<u64> = (0..TICKS).collect();
    for c in clients {
        assert_eq!(c.join().unwrap(), want);
    }
    assert_eq!(feed.join().unwrap().unwrap(), TICKS);
}
