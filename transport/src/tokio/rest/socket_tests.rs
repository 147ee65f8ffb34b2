//! The async REST client's socket options, read back with getsockopt on its socket (the
//! client does not expose its socket): the builder's options on every connection,
//! reconnects too, and `TCP_QUICKACK` set again after the reads of each response.

use socket2::SockRef;

use super::Client;
use crate::socket::RecvMode;

/// Round trips before each check: enough for the kernel's ping-pong detection.
const ROUNDS: usize = 8;

fn socket(c: &Client) -> SockRef<'_> {
    let stream = c.core.stream.as_ref().expect("connected");
    SockRef::from(stream.tcp().expect("a socket"))
}

#[test]
fn options_on_every_connection_and_quickack_after_reads() {
    let server = crate::rest::doc_server();
    let rt = ::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for mode in [RecvMode::Sleep, RecvMode::Spin] {
            let mut c = Client::builder()
                .nodelay(false)
                .so_rcvbuf(200 << 10)
                .so_sndbuf(300 << 10)
                .so_busy_poll(21)
                .quickack(true)
                .recv_mode(mode)
                .build(&format!("http://{server}"))
                .unwrap();
            for connection in 0..2 {
                for i in 0..ROUNDS {
                    let r = c.get("/q").send().await.unwrap();
                    assert_eq!(r.body(), b"GET /q");
                    let s = socket(&c);
                    assert!(!s.tcp_nodelay().unwrap());
                    assert!(s.recv_buffer_size().unwrap() >= 200 << 10);
                    assert!(s.send_buffer_size().unwrap() >= 300 << 10);
                    #[cfg(target_os = "linux")]
                    {
                        assert_eq!(s.busy_poll().unwrap(), 21);
                        assert!(
                            s.tcp_quickack().unwrap(),
                            "{mode:?}, connection {connection}, request {i}"
                        );
                    }
                }
                c.close().await;
            }
            assert_eq!(c.stats().connects, 2);
        }
    });
}
