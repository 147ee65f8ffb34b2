//! Runs `examples/fanout_server.rs` (included as a module): three clients on 127.0.0.1
//! subscribe, the evented server sends 200 ticks to all of them from one `mio::Poll`, then
//! closes; each client gets every tick, in order, and a clean close. The README's
//! fan-out snippet is an excerpt of that example: checked here, line for line.

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

/// The README's fan-out snippet (the code block after its "excerpt of
/// transport/examples/fanout_server.rs" marker) appears in the example, line for line
/// (indentation aside), so it is code that compiles and runs, not a sketch.
#[test]
fn readme_fan_out_snippet_is_an_excerpt_of_the_example() {
    let readme = include_str!("../../README.md");
    let example = include_str!("../examples/fanout_server.rs");
    let marker = "<!-- an excerpt of transport/examples/fanout_server.rs";
    let after = &readme[readme.find(marker).expect("the README marker")..];
    let block = after.split("```rust\n").nth(1).unwrap();
    let block = &block[..block.find("```").unwrap()];
    let want: Vec<&str> = block.lines().map(str::trim).collect();
    assert!(want.len() > 5, "{want:?}");
    let have: Vec<&str> = example.lines().map(str::trim).collect();
    assert!(
        have.windows(want.len()).any(|w| w == want.as_slice()),
        "README snippet not found in examples/fanout_server.rs:\n{block}"
    );
}
