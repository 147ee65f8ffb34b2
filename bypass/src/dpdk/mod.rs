//! DPDK: smoltcp over a DPDK port (feature `dpdk`, Linux, std).
//!
//! The program links the system's DPDK (pkg-config `libdpdk`, 21.11 or newer);
//! DPDK's inline fast path (`rte_eth_rx_burst`, `rte_eth_tx_burst`, mbuf
//! alloc/free and data pointers, checksum helpers) is reached through a small
//! C file the build script compiles against it (`csrc/dpdk_shim.c`), not
//! re-implemented.
//!
//! - [`Dpdk::init`]: EAL from an [`EalConfig`] (lcores, `--no-huge` and `-m`,
//!   `--vdev` or PCI devices, file prefix), once per process.
//! - [`Dpdk::open`]: a mempool, one RX and one TX queue on a port, checksum
//!   offloads where the port has them, started: a [`DpdkDevice`].
//!   [`DpdkDevice::open`] does both in one call. Dropping the device stops and
//!   closes the port, frees the pool and (the last user) cleans EAL up.
//! - [`DpdkDevice`] is a smoltcp `phy::Device`; [`EthLink`](crate::eth::EthLink)
//!   puts smoltcp's Ethernet interface (ARP, IPv4, TCP) on it, and the crate's
//!   WebSocket and REST endpoints run on its sockets as on any other device.
//! - [`Dpdk::ring_pair`]: two ports joined by rte_rings in one process.
//!
//! - [`Dpdk::open_vdev`]: a virtual device created after EAL started (in the
//!   calling thread's network namespace, for `net_af_packet`), removed again
//!   with its device.
//!
//! One thread polls a device at a time (it is `Send`, not `Sync`); on an EAL
//! lcore (the thread that called [`Dpdk::init`]) the mempool's per-lcore
//! cache is used, on other threads it is bypassed.
#![doc = ""]
#![doc = include_str!("environment.md")]
#![allow(unsafe_code)]

mod device;
mod eal;
mod sys;

pub use device::{
    BURST, DpdkDevice, DpdkRxToken, DpdkTxToken, PortConfig, PortDetails, PortId, Stats,
};
pub use eal::{Dpdk, DpdkError, EalConfig};
