//! tickwire-bypass: the proof that tickwire's codec runs in a kernel-bypass
//! poll loop. A tickwire WebSocket client and a tickwire WebSocket server talk
//! through smoltcp (a userspace TCP/IP stack) over a loopback device, in one
//! process and one poll loop, with no kernel socket on the data path.
//!
//! `#![no_std]` without `alloc`: CI builds this library for
//! `x86_64-unknown-none`, so nothing in it can lean on an operating system.
//! The caller supplies all memory, the clock (a smoltcp `Instant` per call)
//! and the randomness (the masking-key source and smoltcp's seed).
//!
//! - [`device`]: a no-alloc loopback `phy::Device` over fixed packet slots,
//!   where a DPDK user plugs in RX/TX rings.
//! - [`link`]: the interface and the two connected TCP sockets.
//! - [`ws`]: a WebSocket endpoint over one smoltcp TCP socket.
//! - [`rest`]: an HTTP/1.1 client and a tiny server, each over one socket.
//! - [`session`]: both endpoints in one loop.
//! - [`demo`]: the scripted exchanges the example runs (WebSocket, then REST).
//! - `xdp` (feature `af-xdp`, Linux, std): the same endpoints on smoltcp over
//!   a real AF_XDP socket, ARP and Ethernet included; see the README.
//! - `dpdk` (feature `dpdk`, Linux, std): the same endpoints on smoltcp over
//!   a DPDK port.
#![no_std]
#![deny(unsafe_code)]

#[cfg(any(
    test,
    all(any(feature = "af-xdp", feature = "dpdk"), target_os = "linux")
))]
extern crate std;

pub mod demo;
pub mod device;
#[cfg(all(feature = "dpdk", target_os = "linux"))]
pub mod dpdk;
#[cfg(all(any(feature = "af-xdp", feature = "dpdk"), target_os = "linux"))]
pub mod eth;
pub mod link;
pub mod rest;
pub mod session;
pub mod ws;
#[cfg(all(feature = "af-xdp", target_os = "linux"))]
pub mod xdp;

/// The smoltcp this crate is built against (0.12, no std, no alloc).
pub use smoltcp;

pub use device::RingDevice;
pub use link::{Link, Pair, TcpBuffers};
pub use session::{Session, Sizes};
pub use ws::{Endpoint, State, Tx};
