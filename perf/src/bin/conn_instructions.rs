//! Whole-process instruction counts of the blocking transport, for callgrind (issue 38):
//! a tickwire client and server in one process, both threads counted, release build.
//!
//! - `stream N`: the client sends N 128 B text messages (`send_text`, one write each), the
//!   server receives and checks them (`recv`), then says "done".
//! - `echo N`: N round trips of a 128 B binary message (client `send_binary` + `recv`,
//!   server `recv` + `send_binary`).
//!
//! ```sh
//! cargo build --release -p tickwire-perf --bin conn_instructions
//! GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=1073741824:glibc.cpu.x86_rep_stosb_threshold=1073741824 \
//!   valgrind --tool=callgrind target/release/conn_instructions echo 40000
//! ```
//!
//! The program uses only the blocking API that existed before `ws::Connection` (a388816),
//! so the same source builds against that tree (a crate outside the workspace with a path
//! dependency on its `transport/`, the workspace's release profile) for a before/after of
//! the connection's per-call cost. The stream's total moves by a few percent from run to run
//! (how many messages each read finds depends on scheduling); the echo's does not.

use tickwire::ws::{Client, Message, Server};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_else(|| "stream".into());
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let mut server = Server::bind("127.0.0.1:0").expect("bind");
    let url = format!("ws://{}/", server.local_addr().expect("addr"));
    let text: String = (0..128u8).map(|i| (b'a' + i % 26) as char).collect();
    let bin: Vec<u8> = (0..128u8).map(|i| i.wrapping_mul(37)).collect();
    match mode.as_str() {
        "stream" => {
            let t = text.clone();
            let h = std::thread::spawn(move || {
                let mut c = Client::connect(&url).expect("connect");
                for _ in 0..n {
                    c.send_text(&t).expect("send");
                }
                // The server's last word: everything arrived.
                match c.recv() {
                    Ok(Some(Message::Text("done"))) => {}
                    other => panic!("{other:?}"),
                }
            });
            let mut s = server.accept().expect("accept");
            let mut acc = 0usize;
            for _ in 0..n {
                match s.recv() {
                    Ok(Some(Message::Text(m))) => acc += m.len() + m.as_bytes()[7] as usize,
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(acc, n * (128 + b'h' as usize));
            s.send_text("done").expect("done");
            h.join().expect("client");
        }
        "echo" => {
            let h = std::thread::spawn(move || {
                let mut s = server.accept().expect("accept");
                let mut buf = [0u8; 128];
                loop {
                    let len = match s.recv() {
                        Ok(Some(Message::Binary(b))) => {
                            buf[..b.len()].copy_from_slice(b);
                            b.len()
                        }
                        _ => return,
                    };
                    if s.send_binary(&buf[..len]).is_err() {
                        return;
                    }
                }
            });
            let mut c = Client::connect(&url).expect("connect");
            let mut acc = 0usize;
            for _ in 0..n {
                c.send_binary(&bin).expect("send");
                match c.recv() {
                    Ok(Some(Message::Binary(b))) => acc += b.len() + b[5] as usize,
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(acc, n * (128 + bin[5] as usize));
            drop(c);
            h.join().expect("server");
        }
        m => panic!("mode {m}: stream N | echo N"),
    }
}
