//! The C side: `csrc/dpdk_shim.c`, compiled by the build script against the
//! system's DPDK. Each function wraps one of DPDK's (mostly `static inline`)
//! calls; see the C file for what each returns.

use core::ffi::{c_char, c_int, c_uint};
use core::marker::{PhantomData, PhantomPinned};

/// `struct rte_mbuf` (opaque: only DPDK's inline functions look inside).
#[repr(C)]
pub struct Mbuf {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// `struct rte_mempool` (opaque).
#[repr(C)]
pub struct Mempool {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// `struct tw_dpdk_port_info` of the C file.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PortInfo {
    pub mac: [u8; 6],
    pub mtu: u16,
    pub rx_desc: u16,
    pub tx_desc: u16,
    pub socket: i32,
    pub rx_offload_capa: u64,
    pub tx_offload_capa: u64,
    pub rx_offloads: u64,
    pub tx_offloads: u64,
    pub driver: [c_char; 64],
}

impl PortInfo {
    pub const fn zeroed() -> Self {
        PortInfo {
            mac: [0; 6],
            mtu: 0,
            rx_desc: 0,
            tx_desc: 0,
            socket: 0,
            rx_offload_capa: 0,
            tx_offload_capa: 0,
            rx_offloads: 0,
            tx_offloads: 0,
            driver: [0; 64],
        }
    }
}

/// Which offload bit `tw_dpdk_offload_bit` returns.
pub const RX_IPV4_CKSUM: c_int = 0;
pub const RX_TCP_CKSUM: c_int = 1;
pub const TX_IPV4_CKSUM: c_int = 2;
pub const TX_TCP_CKSUM: c_int = 3;

/// `RTE_PKTMBUF_HEADROOM` of Debian's build (and DPDK's default).
pub const MBUF_HEADROOM: u16 = 128;

unsafe extern "C" {
    pub fn tw_dpdk_offload_bit(which: c_int) -> u64;
    pub fn tw_dpdk_errno() -> c_int;
    pub fn tw_dpdk_strerror(err: c_int) -> *const c_char;
    pub fn tw_dpdk_eal_init(argc: c_int, argv: *mut *mut c_char) -> c_int;
    pub fn tw_dpdk_eal_cleanup() -> c_int;
    pub fn tw_dpdk_runtime_dir() -> *const c_char;
    pub fn tw_dpdk_lcore_id() -> c_uint;
    pub fn tw_dpdk_thread_register() -> c_int;
    pub fn tw_dpdk_port_by_name(name: *const c_char, port: *mut u16) -> c_int;
    pub fn tw_dpdk_port_name(port: u16, name: *mut c_char, len: usize) -> c_int;
    pub fn tw_dpdk_port_valid(port: u16) -> c_int;
    pub fn tw_dpdk_pool_create(
        name: *const c_char,
        n: c_uint,
        cache: c_uint,
        data_room: u16,
        socket: c_int,
    ) -> *mut Mempool;
    pub fn tw_dpdk_pool_free(mp: *mut Mempool);
    pub fn tw_dpdk_pool_avail(mp: *const Mempool) -> c_uint;
    pub fn tw_dpdk_port_start(
        port: u16,
        rx_desc: u16,
        tx_desc: u16,
        mp: *mut Mempool,
        checksum_offload: c_int,
        info: *mut PortInfo,
    ) -> c_int;
    pub fn tw_dpdk_port_close(port: u16) -> c_int;
    pub fn tw_dpdk_link_up(port: u16) -> c_int;
    pub fn tw_dpdk_port_stats(port: u16, out: *mut [u64; 6]) -> c_int;
    pub fn tw_dpdk_ring_pair(
        name_a: *const c_char,
        name_b: *const c_char,
        ring_size: c_uint,
        port_a: *mut u16,
        port_b: *mut u16,
    ) -> c_int;
    pub fn tw_dpdk_vdev_add(name: *const c_char, args: *const c_char) -> c_int;
    pub fn tw_dpdk_vdev_remove(name: *const c_char) -> c_int;
    pub fn tw_dpdk_ring_pair_free(name_a: *const c_char, name_b: *const c_char);

    pub fn tw_dpdk_rx_burst(port: u16, queue: u16, pkts: *mut *mut Mbuf, n: u16) -> u16;
    pub fn tw_dpdk_tx_burst(port: u16, queue: u16, pkts: *mut *mut Mbuf, n: u16) -> u16;
    pub fn tw_dpdk_mbuf_alloc(mp: *mut Mempool) -> *mut Mbuf;
    pub fn tw_dpdk_mbuf_free(m: *mut Mbuf);
    pub fn tw_dpdk_mbuf_free_bulk(pkts: *mut *mut Mbuf, n: c_uint);
    pub fn tw_dpdk_rx_data(m: *const Mbuf, len: *mut u16) -> *const u8;
    pub fn tw_dpdk_rx_checksum_ok(m: *const Mbuf) -> c_int;
    pub fn tw_dpdk_tx_data(m: *mut Mbuf, len: u16) -> *mut u8;
    pub fn tw_dpdk_tx_checksum_offload(m: *mut Mbuf, tx_offloads: u64);
    #[cfg(test)]
    pub fn tw_dpdk_tx_checksum_finish(m: *mut Mbuf);
}
