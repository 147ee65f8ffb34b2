//! A tickwire WebSocket client and server talking through smoltcp in one
//! poll loop, then a REST exchange over a second connection in the same
//! loop, with no kernel socket on the data path.
//!
//! ```sh
//! cargo run -p tickwire-bypass --example ws_over_smoltcp
//! ```
//!
//! Everything the loop needs comes from here, the caller: the memory (one
//! arena for the TCP and WebSocket buffers, the device's packet slots, the
//! socket slots), the clock (a smoltcp `Instant` each turn), and the
//! randomness (the handshake nonce, the masking keys, smoltcp's seed). This
//! program takes them from std; a bare-metal or DPDK program takes them from
//! its own allocator, TSC and RNG, and runs the same library code.

use std::process::ExitCode;
use std::time::Instant as StdInstant;

use smoltcp::iface::SocketStorage;
use smoltcp::time::Instant;
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::rest::{RestClient, RestServer};
use tickwire_bypass::{RingDevice, Session, Sizes, demo};
use tickwire_codec::http::RequestWriter;
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::Config;
use tickwire_codec::ws::handshake::ClientHandshake;

/// Packet slots in the loopback ring; each is one MTU.
const SLOTS: usize = 16;
/// The ring's MTU: the largest IPv4 packet, like Linux's `lo` (64 KiB).
const MTU: usize = 65535;

fn main() -> ExitCode {
    // Randomness: one OS seed at start-up, then a CSPRNG in user space.
    let mut rng = match MaskRng::from_entropy() {
        Ok(rng) => rng,
        Err(e) => {
            eprintln!("no entropy: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce);
    let smoltcp_seed = u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());

    // Memory: all of it allocated here, once, before the loop.
    let sizes = Sizes {
        tcp: 64 * 1024,
        ws: 64 * 1024,
    };
    let mut arena = vec![0u8; sizes.arena_len()];
    let device = RingDevice::<_, SLOTS>::new(vec![0u8; SLOTS * MTU]);
    let mut rest_tcp = vec![0u8; 4 * 16 * 1024];
    // Two sockets for the WebSocket connection, two for the REST one.
    let mut slots = [SocketStorage::EMPTY; 4];

    // The clock: microseconds since start, read once per turn.
    let t0 = StdInstant::now();
    let clock = || Instant::from_micros(t0.elapsed().as_micros() as i64);

    let handshake = ClientHandshake::new("127.0.0.1:9001", "/bypass", nonce);
    let mut session = match Session::new(
        device,
        &mut arena,
        sizes,
        &mut slots,
        handshake,
        rng,
        Config::default(),
        smoltcp_seed,
        clock(),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("setup failed: {e}");
            return ExitCode::FAILURE;
        }
    };

    // The REST connection: a second pair of sockets on the same interface.
    let (c, s) = rest_tcp.split_at_mut(2 * 16 * 1024);
    let (crx, ctx) = c.split_at_mut(16 * 1024);
    let (srx, stx) = s.split_at_mut(16 * 1024);
    let pair = match session.link.add_pair(
        TcpBuffers { rx: crx, tx: ctx },
        TcpBuffers { rx: srx, tx: stx },
        8080,
        49153,
    ) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("setup failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let writer = match RequestWriter::new([0u8; 1024], "127.0.0.1:8080") {
        Ok(w) => w,
        Err(e) => {
            eprintln!("setup failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut rest_client = RestClient::new(writer, [0u8; 4096]);
    let mut rest_server = RestServer::new([0u8; 4096], [0u8; 4096]);

    match demo::run(&mut session, clock) {
        Ok(r) => {
            println!("WebSocket over smoltcp (no kernel socket on the data path):");
            println!("  opening handshake        client and server, via tickwire-codec");
            println!(
                "  echoes checked           {} (text, binary, fragmented text)",
                r.echoes
            );
            println!("  server message received  {}", r.server_text);
            println!(
                "  pongs                    client {}, server {}",
                r.client_pongs, r.server_pongs
            );
            println!(
                "  close codes              server saw {:?}, client saw {:?}",
                r.server_saw_close, r.client_saw_close
            );
            println!(
                "  loop turns               {} in {} us",
                r.turns,
                r.elapsed.total_micros()
            );
        }
        Err(e) => {
            eprintln!("exchange failed: {e}");
            return ExitCode::FAILURE;
        }
    }
    match demo::run_rest(
        &mut session,
        pair,
        &mut rest_client,
        &mut rest_server,
        clock,
    ) {
        Ok(r) => {
            println!(
                "REST over the same loop (RequestWriter/ResponseReader, RequestReader/ResponseWriter):"
            );
            println!(
                "  GET {}?symbol={}   {} {}",
                demo::QUOTE_PATH,
                demo::SYMBOL,
                r.quote,
                demo::QUOTE_BODY
            );
            println!(
                "  POST /order              {} {}",
                r.order,
                demo::ORDER_REPLY
            );
            println!("  GET /missing             {}", r.missing);
            println!("  loop turns               {}", r.turns);
            println!(
                "  packets dropped          {}",
                session.link.device.dropped()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("REST exchange failed: {e}");
            ExitCode::FAILURE
        }
    }
}
