//! Real kernel bypass on Linux: smoltcp over an AF_XDP socket (feature
//! `af-xdp`, on by default; needs std).
//!
//! An XDP program on the interface redirects every frame of one queue into
//! an XDP socket's RX ring, in a UMEM the application owns; smoltcp reads it
//! there, answers ARP, runs TCP, and writes its packets straight into free
//! UMEM frames that the kernel (copy mode) or the NIC (zero-copy) sends.
//! The WebSocket and REST endpoints of this crate run on top unchanged.
//!
//! - [`XdpDevice`]: the smoltcp `phy::Device` over the socket's four rings.
//! - [`XdpProgram`]: the five-instruction redirect program and its XSKMAP.
//! - [`XdpLink`]: smoltcp on Ethernet (MAC, ARP, IPv4) with client sockets.
//! - [`netns`]: the two-namespace veth environment the tests build.
#![allow(unsafe_code)]

mod device;
mod net;
pub mod netns;
mod program;
mod ring;
mod sys;

pub use device::{BATCH, BindMode, Stats, UmemArea, XdpConfig, XdpDevice, XdpRxToken, XdpTxToken};
pub use net::XdpLink;
pub use program::{Attach, XdpProgram};
