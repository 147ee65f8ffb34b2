//! Memory per connection and the soak (issue 27): 10,000 WebSocket connections on one
//! tickwire server poll loop (evented `try_accept` / `try_recv` / `flush` on mio), idle,
//! then three rounds in which every connection sends four text messages (every tenth
//! also one of 10 KB, bigger than a connection's initial buffers) and reads the echoes;
//! the same on tickwire's tokio server (a current-thread runtime, a task per
//! connection). tokio-tungstenite holds the same 10,000 idle connections in the same
//! run. The
//! harness is in `conn_memory/mod.rs`; perf's `conn_memory` binary runs the same with
//! more rounds.
//!
//! Asserted, for the mio and the tokio server: every connection opens; an idle tickwire
//! connection costs at most 16 KiB resident, and less than a tokio-tungstenite one;
//! every echo arrives, in order, with its content (the clients check each); no
//! connection is lost; the server's resident set after the last round is within 4 MiB
//! of the one after the first (the buffers that grew for the big messages were given
//! back).

mod conn_memory;

use conn_memory::{Peer, Plan};

const NAME: &str = "ten_thousand_connections_memory_and_soak";

#[test]
fn ten_thousand_connections_memory_and_soak() {
    conn_memory::child();
    let exe = ["--exact", NAME, "--nocapture", "--test-threads=1"];
    let plan = Plan {
        conns: 10_000,
        rounds: 3,
        messages: 4,
    };
    let tw = conn_memory::run(&exe, Peer::Tickwire, plan);
    // The tokio server holds one descriptor a connection (its readiness registers the
    // socket itself): all 10,000 under a 20,000-descriptor limit, like the mio server.
    let tk_plan = plan;
    let tk = conn_memory::run(&exe, Peer::TickwireTokio, tk_plan);
    let tt = conn_memory::run(&exe, Peer::TokioTungstenite, Plan { rounds: 0, ..plan });
    for r in [&tw, &tk, &tt] {
        eprintln!(
            "{}: {} connections, {:.0} B resident ({:.0} B virtual) per idle connection \
             ({} -> {} B); opened in {:?}, soak {:?}",
            r.peer.name(),
            r.conns,
            r.per_conn(),
            r.vm_per_conn(),
            r.rss_before,
            r.rss_idle,
            r.open_time,
            r.soak_time
        );
    }
    for r in [&tw, &tk] {
        eprintln!(
            "{} soak samples (resident bytes, open connections): {:?}",
            r.peer.name(),
            r.samples
        );
    }
    assert_eq!(tt.conns, plan.conns);
    for (r, plan) in [(&tw, plan), (&tk, tk_plan)] {
        let name = r.peer.name();
        assert_eq!(r.conns, plan.conns, "{name}");
        assert!(
            r.per_conn() <= 16384.0,
            "{name}: {:.0} B per connection",
            r.per_conn()
        );
        assert!(
            r.per_conn() < tt.per_conn(),
            "{name} {:.0} B, tokio-tungstenite {:.0} B per connection",
            r.per_conn(),
            tt.per_conn()
        );
        let sent = (plan.conns * plan.rounds * plan.messages) as u64;
        assert_eq!(r.echoes, sent, "{name}: every message echoed and checked");
        assert_eq!(r.samples.len(), plan.rounds, "{name}");
        assert!(
            r.samples.iter().all(|&(_, open)| open == plan.conns),
            "{name}: a connection was lost"
        );
        let first = r.samples[0].0;
        let last = r.samples[plan.rounds - 1].0;
        assert!(
            last <= first + (4 << 20),
            "{name}: resident set grew from {first} to {last} bytes across the soak"
        );
    }
}
