//! tickwire-bypass: tickwire's WebSocket and REST clients, plain and TLS, on a
//! userspace TCP/IP stack (smoltcp) in one poll loop, with no kernel socket on
//! the data path: over Linux AF_XDP ([`xdp`], feature `af-xdp`), a DPDK port,
//! or any NIC ring you wrap in a smoltcp `phy::Device`.
//!
//! - [`Stack`]: many connections (`ws://`, `wss://`, `http://`, `https://`) on
//!   one interface and one device; `poll(now)`, events, `poll_at()`;
//!   connections added, reconnected and removed while the loop runs; each
//!   connection in a [`Slot`] of memory the caller handed in once.
//! - [`clock`]: `now` from the TSC, calibrated once, no system call.
//! - [`resolve`](mod@resolve) (feature `std`): names resolved before the loop.
//! - [`device::RingDevice`]: a no-alloc loopback device over fixed packet
//!   slots, the model for wrapping NIC rings.
//! - [`ws`], [`rest`], [`link`], [`session`], [`demo`]: one WebSocket or REST
//!   endpoint over one smoltcp socket, and the in-process loopback pair the
//!   examples and tests use.
//! - `dpdk` (feature `dpdk`, Linux, std): smoltcp over a DPDK port; the same
//!   endpoints and the [`Stack`] run on it (see the README).
//!
//! The core is `#![no_std]` and needs no allocator: CI builds it for
//! `x86_64-unknown-none` with `--no-default-features`. The caller supplies
//! all memory, the clock and the randomness. Feature `tls` (on by default)
//! adds `wss://` and `https://` through the codec's TLS (rustls's unbuffered
//! API; needs `alloc`), `std` the clock's calibration and the resolver,
//! `af-xdp` the AF_XDP device (Linux, std). See the README for what a
//! connection costs and a complete program.
#![no_std]
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "tls")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod clock;
pub mod demo;
pub mod device;
#[cfg(all(feature = "dpdk", target_os = "linux"))]
pub mod dpdk;
#[cfg(all(any(feature = "af-xdp", feature = "dpdk"), target_os = "linux"))]
pub mod eth;
mod lease;
pub mod link;
#[cfg(feature = "std")]
pub mod resolve;
pub mod rest;
pub mod session;
pub mod stack;
pub mod ws;
#[cfg(all(feature = "af-xdp", target_os = "linux"))]
pub mod xdp;

/// The smoltcp this crate is built against (0.12, no std, no alloc).
pub use smoltcp;
/// The codec this crate drives (messages, requests, responses, TLS settings).
pub use tickwire_codec;

pub use device::RingDevice;
pub use lease::Lease;
pub use link::{Link, Pair, TcpBuffers};
pub use session::{Session, Sizes};
pub use stack::{
    ConnError, ConnId, Event, NetConfig, Nic, Options, Remote, Scheme, SetupError, Slot, SlotSizes,
    Stack,
};
pub use ws::{Endpoint, State, Tx};
