//! A smoltcp `phy::Device` over one DPDK port (queue 0 each way).
//!
//! - `receive` hands out the next mbuf of the last `rte_eth_rx_burst` (a new
//!   burst of up to [`BURST`] when those are used up); its [`DpdkRxToken`]
//!   gives smoltcp the packet bytes where the port put them and frees the
//!   mbuf after (consumed or dropped).
//! - `transmit` gives a [`DpdkTxToken`] that takes a fresh mbuf from the
//!   pool, lets smoltcp write the packet straight into it and queues it;
//!   [`DpdkDevice::commit`] sends the queue with one `rte_eth_tx_burst` (once
//!   per turn of the poll loop; a full queue of [`BURST`] is sent at once).
//! - Checksums: where the port offers IPv4/TCP checksum offload (and
//!   [`PortConfig::checksum_offload`] is on) smoltcp is told not to compute
//!   or check them ([`DeviceCapabilities::checksum`]): the port fills them in
//!   on send and reports them on receive (a bad one is dropped here; one the
//!   port could not check is checked by DPDK's software helper).
//!
//! Nothing is allocated on the Rust heap after [`Dpdk::open`]; mbufs come
//! from the DPDK mempool made there.

use core::ffi::c_int;
use std::ffi::{CStr, CString};
use std::prelude::rust_2024::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::{format, vec};

use smoltcp::phy::{self, Checksum, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

use super::eal::{Dpdk, DpdkError, port_name};
use super::sys::{self, Mbuf, Mempool};

/// Packets per `rte_eth_rx_burst` / `rte_eth_tx_burst`.
pub const BURST: usize = 32;

/// Which port to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortId {
    /// The only port EAL found (an error if there are none or several).
    Only,
    /// By index.
    Index(u16),
    /// By name: a vdev's name (`net_af_packet0`) or a PCI address (`0000:3b:00.0`).
    Name(String),
}

/// How to set a port up: its queues and its packet memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// The port.
    pub port: PortId,
    /// RX descriptors (the driver may round it).
    pub rx_desc: u16,
    /// TX descriptors (the driver may round it).
    pub tx_desc: u16,
    /// Mbufs in the pool: enough for the RX ring, the TX ring, one burst in
    /// flight each way and the mempool caches. `2^n - 1` uses memory best.
    pub mbufs: u32,
    /// Per-lcore mempool cache (0: none; at most 512 and `mbufs / 1.5`).
    pub mbuf_cache: u32,
    /// Bytes of packet room per mbuf, headroom (128) included: the MTU
    /// smoltcp is given is at most this minus the headroom.
    pub data_room: u16,
    /// Use the port's IPv4 and TCP checksum offloads when it offers them.
    pub checksum_offload: bool,
    /// The Ethernet address smoltcp uses; `None`: the port's own (or, when the
    /// port has none, a locally administered one made from the port number).
    pub mac: Option<[u8; 6]>,
}

impl PortConfig {
    /// The defaults for port `name`: 1024 descriptors each way, 4095 mbufs of
    /// 2048 + 128 bytes with a cache of 256, checksum offloads on.
    pub fn named(name: &str) -> Self {
        PortConfig {
            port: PortId::Name(name.into()),
            ..PortConfig::default()
        }
    }
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            port: PortId::Only,
            rx_desc: 1024,
            tx_desc: 1024,
            mbufs: 4095,
            mbuf_cache: 256,
            data_room: 2048 + sys::MBUF_HEADROOM,
            checksum_offload: true,
            mac: None,
        }
    }
}

/// What the port offers and what was switched on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortDetails {
    /// Port index.
    pub port: u16,
    /// Port name.
    pub name: String,
    /// The driver (`net_af_packet`, `net_memif`, `net_ring`, `net_ice`, ...).
    pub driver: String,
    /// The port's MTU.
    pub mtu: u16,
    /// Descriptors per ring, as the driver took them.
    pub rx_desc: u16,
    /// Descriptors per ring, as the driver took them.
    pub tx_desc: u16,
    /// IPv4 header checksums computed by the port on send.
    pub tx_ipv4_checksum: bool,
    /// TCP checksums computed by the port on send.
    pub tx_tcp_checksum: bool,
    /// IPv4 header checksums checked by the port on receive.
    pub rx_ipv4_checksum: bool,
    /// TCP checksums checked by the port on receive.
    pub rx_tcp_checksum: bool,
}

/// Counters of the device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets handed to smoltcp.
    pub rx_packets: u64,
    /// `rte_eth_rx_burst` calls that returned packets.
    pub rx_bursts: u64,
    /// Packets queued by smoltcp and taken by the port.
    pub tx_packets: u64,
    /// `rte_eth_tx_burst` calls.
    pub tx_bursts: u64,
    /// Packets dropped for want of an mbuf (TCP sends them again).
    pub tx_no_mbuf: u64,
    /// Packets dropped because the port's TX ring stayed full (TCP sends them again).
    pub tx_ring_full: u64,
    /// Packets larger than an mbuf (never expected: the MTU is reported).
    pub tx_oversize: u64,
    /// Received packets with a bad checksum (dropped).
    pub rx_bad_checksum: u64,
    /// Received packets in more than one segment (dropped; never expected).
    pub rx_multi_segment: u64,
}

/// The rings of a [`Dpdk::ring_pair`], freed after both ports are closed.
#[derive(Debug)]
struct RingPair {
    a: CString,
    b: CString,
}

impl Drop for RingPair {
    fn drop(&mut self) {
        // SAFETY: both ports over these rings were closed (each device closes its
        // port in its own drop, before it drops its share of this value).
        unsafe { sys::tw_dpdk_ring_pair_free(self.a.as_ptr(), self.b.as_ptr()) };
    }
}

/// The send half: mbufs written by smoltcp, waiting for the next burst.
#[derive(Debug)]
struct TxSide {
    port: u16,
    pool: *mut Mempool,
    queue: [*mut Mbuf; BURST],
    queued: usize,
    offloads: u64,
    /// The most a packet may take (the mbuf's room after the headroom).
    room: usize,
    stats: Stats,
    /// Where a packet goes when it cannot be sent (dropped).
    scratch: Box<[u8]>,
}

impl TxSide {
    /// Burst the queue out; what the port does not take stays queued.
    fn flush(&mut self) {
        let mut sent = 0;
        while sent < self.queued {
            // SAFETY: queue[sent..queued] are mbufs this side owns; the port takes
            // ownership of the first `n` of them.
            let n = unsafe {
                sys::tw_dpdk_tx_burst(
                    self.port,
                    0,
                    self.queue.as_mut_ptr().add(sent),
                    (self.queued - sent) as u16,
                )
            } as usize;
            self.stats.tx_bursts += 1;
            if n == 0 {
                break;
            }
            sent += n;
            self.stats.tx_packets += n as u64;
        }
        self.queue.copy_within(sent..self.queued, 0);
        self.queued -= sent;
    }

    /// Room for one more packet in the queue (a burst first if it is full).
    fn has_room(&mut self) -> bool {
        if self.queued == BURST {
            self.flush();
        }
        self.queued < BURST
    }
}

/// A smoltcp Ethernet device over one DPDK port.
#[derive(Debug)]
pub struct DpdkDevice {
    port: u16,
    rx: [*mut Mbuf; BURST],
    rx_next: usize,
    rx_len: usize,
    rx_check: bool,
    tx: TxSide,
    pool: *mut Mempool,
    caps: DeviceCapabilities,
    mac: [u8; 6],
    details: PortDetails,
    rings: Option<Arc<RingPair>>,
    /// The vdev [`Dpdk::open_vdev`] created, removed after the port is closed.
    hotplugged: Option<CString>,
    // Dropped last: EAL is cleaned up after the port and the pool.
    _dpdk: Dpdk,
}

static POOLS: AtomicU32 = AtomicU32::new(0);

fn bit(which: c_int) -> u64 {
    // SAFETY: a constant lookup.
    unsafe { sys::tw_dpdk_offload_bit(which) }
}

impl Dpdk {
    /// Make a mempool for `cfg`, configure `cfg.port` with one RX and one TX
    /// queue, switch on the checksum offloads it offers (if asked), start it,
    /// and wrap it as a smoltcp device. Call on the thread that will poll it
    /// (an EAL lcore: the one that called [`Dpdk::init`]).
    ///
    /// ```no_run
    /// use tickwire_bypass::dpdk::{Dpdk, EalConfig, PortConfig};
    /// let dpdk = Dpdk::init(&EalConfig::virtual_devices("0", 256).vdev("net_ring0"))?;
    /// let device = dpdk.open(&PortConfig::named("net_ring0"))?;
    /// println!("{:?}", device.details());
    /// # Ok::<(), tickwire_bypass::dpdk::DpdkError>(())
    /// ```
    pub fn open(&self, cfg: &PortConfig) -> Result<DpdkDevice, DpdkError> {
        let port = self.find(&cfg.port)?;
        DpdkDevice::start(self.clone(), port, cfg, None)
    }

    /// Create the virtual device `spec` now (EAL's hot-plug: `"name,key=value,..."`,
    /// as for `--vdev`) and open its port as [`open`](Self::open) does (the
    /// port named in `cfg` is ignored); the device is removed again when the
    /// returned [`DpdkDevice`] is dropped. A device that opens a kernel socket
    /// (`net_af_packet`, `net_af_xdp`) opens it in the calling thread's
    /// network namespace.
    ///
    /// ```no_run
    /// use tickwire_bypass::dpdk::{Dpdk, EalConfig, PortConfig};
    /// let dpdk = Dpdk::init(&EalConfig::virtual_devices("0", 256))?;
    /// let device = dpdk.open_vdev("net_af_packet1,iface=eth1", &PortConfig::default())?;
    /// # Ok::<(), tickwire_bypass::dpdk::DpdkError>(())
    /// ```
    pub fn open_vdev(&self, spec: &str, cfg: &PortConfig) -> Result<DpdkDevice, DpdkError> {
        let (name, args) = spec.split_once(',').unwrap_or((spec, ""));
        let invalid = || DpdkError::Invalid(format!("vdev {spec:?} contains a NUL byte"));
        let cname = CString::new(name).map_err(|_| invalid())?;
        let cargs = CString::new(args).map_err(|_| invalid())?;
        // SAFETY: NUL-terminated strings that outlive the call.
        let rc = unsafe { sys::tw_dpdk_vdev_add(cname.as_ptr(), cargs.as_ptr()) };
        if rc != 0 {
            return Err(DpdkError::Port {
                port: spec.into(),
                step: "rte_eal_hotplug_add",
                code: -rc,
            });
        }
        let opened = self
            .find(&PortId::Name(name.into()))
            .and_then(|port| DpdkDevice::start(self.clone(), port, cfg, None));
        match opened {
            Ok(mut d) => {
                d.hotplugged = Some(cname);
                Ok(d)
            }
            Err(e) => {
                // SAFETY: the device was created just above and no port of it is open.
                unsafe { sys::tw_dpdk_vdev_remove(cname.as_ptr()) };
                Err(e)
            }
        }
    }

    /// Two ports joined by a pair of rte_rings in this process (what one
    /// sends, the other receives): DPDK to DPDK with no kernel and no other
    /// process, for tests and benchmarks. Named `<name>a` and `<name>b`.
    pub fn ring_pair(
        &self,
        name: &str,
        cfg: &PortConfig,
    ) -> Result<(DpdkDevice, DpdkDevice), DpdkError> {
        let invalid = || DpdkError::Invalid(format!("ring pair name {name:?}"));
        let a = CString::new(format!("{name}a")).map_err(|_| invalid())?;
        let b = CString::new(format!("{name}b")).map_err(|_| invalid())?;
        let (mut pa, mut pb) = (0u16, 0u16);
        let size = u32::from(cfg.rx_desc.max(cfg.tx_desc)).next_power_of_two();
        // SAFETY: NUL-terminated names, out-pointers to locals.
        let rc = unsafe { sys::tw_dpdk_ring_pair(a.as_ptr(), b.as_ptr(), size, &mut pa, &mut pb) };
        if rc != 0 {
            return Err(DpdkError::Port {
                port: name.into(),
                step: "rte_eth_from_rings",
                code: -rc,
            });
        }
        let rings = Arc::new(RingPair { a, b });
        let da = DpdkDevice::start(self.clone(), pa, cfg, Some(rings.clone()))?;
        let db = DpdkDevice::start(self.clone(), pb, cfg, Some(rings))?;
        Ok((da, db))
    }

    fn find(&self, id: &PortId) -> Result<u16, DpdkError> {
        let ports = self.ports();
        let missing = |wanted: String| DpdkError::NoSuchPort {
            wanted,
            found: ports.iter().map(|(_, n)| n.clone()).collect(),
        };
        match id {
            PortId::Only if ports.len() == 1 => Ok(ports[0].0),
            PortId::Only => Err(missing("(the only one)".into())),
            PortId::Index(i) => ports
                .iter()
                .find(|(p, _)| p == i)
                .map(|(p, _)| *p)
                .ok_or_else(|| missing(format!("#{i}"))),
            PortId::Name(n) => {
                let c = CString::new(n.as_str()).map_err(|_| missing(n.clone()))?;
                let mut p = 0u16;
                // SAFETY: a NUL-terminated name and an out-pointer to a local.
                match unsafe { sys::tw_dpdk_port_by_name(c.as_ptr(), &mut p) } {
                    0 => Ok(p),
                    _ => Err(missing(n.clone())),
                }
            }
        }
    }
}

// SAFETY: the device is the only user of its port's queue 0 and of its
// mbufs, and needs `&mut self` for both, so it is used by one thread at a
// time wherever it moves. Mempool operations are thread-safe; their
// per-lcore cache is chosen by the calling thread's own lcore id (none on a
// thread EAL did not make, which only bypasses the cache).
unsafe impl Send for DpdkDevice {}

impl DpdkDevice {
    /// Everything in one call: initialise EAL with `eal` (once per process),
    /// then open `port` as [`Dpdk::open`] does. Dropping the device stops and
    /// closes the port, frees the mempool and cleans EAL up.
    ///
    /// ```no_run
    /// use tickwire_bypass::dpdk::{DpdkDevice, EalConfig, PortConfig};
    /// // A real NIC: hugepages, the NIC bound to vfio-pci, the loop on CPU 3.
    /// let eal = EalConfig {
    ///     pci_allow: vec!["0000:3b:00.0".into()],
    ///     ..EalConfig::virtual_devices("3", 0)
    /// };
    /// let eal = EalConfig { no_huge: false, no_pci: false, memory_mb: None, ..eal };
    /// let device = DpdkDevice::open(&eal, &PortConfig::named("0000:3b:00.0"))?;
    /// # Ok::<(), tickwire_bypass::dpdk::DpdkError>(())
    /// ```
    pub fn open(eal: &super::EalConfig, port: &PortConfig) -> Result<DpdkDevice, DpdkError> {
        Dpdk::init(eal)?.open(port)
    }

    fn start(
        dpdk: Dpdk,
        port: u16,
        cfg: &PortConfig,
        rings: Option<Arc<RingPair>>,
    ) -> Result<DpdkDevice, DpdkError> {
        let name = port_name(port);
        let fail = |step: &'static str, code: i32| DpdkError::Port {
            port: name.clone(),
            step,
            code,
        };
        if cfg.data_room <= sys::MBUF_HEADROOM + 64 {
            return Err(DpdkError::Invalid(format!(
                "data_room {} leaves no room for a packet after the {}-byte headroom",
                cfg.data_room,
                sys::MBUF_HEADROOM
            )));
        }
        let pool_name = CString::new(format!(
            "tw{}p{port}",
            POOLS.fetch_add(1, Ordering::Relaxed)
        ))
        .expect("no NUL in a formatted name");
        // SAFETY: a NUL-terminated name; the pool is ours until freed in Drop.
        let pool = unsafe {
            sys::tw_dpdk_pool_create(
                pool_name.as_ptr(),
                cfg.mbufs,
                cfg.mbuf_cache,
                cfg.data_room,
                -1,
            )
        };
        if pool.is_null() {
            // SAFETY: reads DPDK's per-thread error number.
            return Err(fail("rte_pktmbuf_pool_create", unsafe {
                sys::tw_dpdk_errno()
            }));
        }
        let mut info = sys::PortInfo::zeroed();
        // SAFETY: `port` is a valid port, `pool` a live mempool, `info` a local
        // the C side fills in.
        let rc = unsafe {
            sys::tw_dpdk_port_start(
                port,
                cfg.rx_desc,
                cfg.tx_desc,
                pool,
                c_int::from(cfg.checksum_offload),
                &mut info,
            )
        };
        if rc != 0 {
            // SAFETY: the port may hold mbufs of the pool: close it before freeing.
            unsafe {
                sys::tw_dpdk_port_close(port);
                sys::tw_dpdk_pool_free(pool);
            }
            return Err(fail("configure/queue setup/start", -rc));
        }
        // SAFETY: `driver` is NUL-terminated by the C side's snprintf.
        let driver = unsafe { CStr::from_ptr(info.driver.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let has = |set: u64, which| set & bit(which) != 0;
        let details = PortDetails {
            port,
            name: name.clone(),
            driver,
            mtu: info.mtu,
            rx_desc: info.rx_desc,
            tx_desc: info.tx_desc,
            tx_ipv4_checksum: has(info.tx_offloads, sys::TX_IPV4_CKSUM),
            tx_tcp_checksum: has(info.tx_offloads, sys::TX_TCP_CKSUM),
            rx_ipv4_checksum: has(info.rx_offloads, sys::RX_IPV4_CKSUM),
            rx_tcp_checksum: has(info.rx_offloads, sys::RX_TCP_CKSUM),
        };
        let room = usize::from(cfg.data_room - sys::MBUF_HEADROOM);
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        // The largest Ethernet frame (header included): the port's MTU, bounded
        // by what one mbuf holds.
        caps.max_transmission_unit = (usize::from(info.mtu) + 14).min(room);
        caps.max_burst_size = Some(BURST);
        caps.checksum.ipv4 = checksum(details.rx_ipv4_checksum, details.tx_ipv4_checksum);
        caps.checksum.tcp = checksum(details.rx_tcp_checksum, details.tx_tcp_checksum);
        let mac = cfg.mac.unwrap_or_else(|| {
            let m = info.mac;
            if m == [0; 6] || m[0] & 1 == 1 {
                // No usable address (net_ring has none): locally administered, unicast.
                let p = port.to_be_bytes();
                [0x02, 0x74, 0x77, 0x00, p[0], p[1]]
            } else {
                m
            }
        });
        Ok(DpdkDevice {
            port,
            rx: [core::ptr::null_mut(); BURST],
            rx_next: 0,
            rx_len: 0,
            rx_check: info.rx_offloads != 0,
            tx: TxSide {
                port,
                pool,
                queue: [core::ptr::null_mut(); BURST],
                queued: 0,
                offloads: info.tx_offloads,
                room,
                stats: Stats::default(),
                scratch: vec![0u8; usize::from(cfg.data_room)].into_boxed_slice(),
            },
            pool,
            caps,
            mac,
            details,
            rings,
            hotplugged: None,
            _dpdk: dpdk,
        })
    }

    /// The Ethernet address smoltcp uses.
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// The port: name, driver, MTU, ring sizes, checksum offloads in use.
    pub fn details(&self) -> &PortDetails {
        &self.details
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        self.tx.stats
    }

    /// The port's own counters: received, sent, missed (RX ring full),
    /// receive errors, send errors, receive failures for want of an mbuf.
    pub fn port_stats(&self) -> Result<[u64; 6], DpdkError> {
        let mut out = [0u64; 6];
        // SAFETY: a started port and an out-array of six counters.
        match unsafe { sys::tw_dpdk_port_stats(self.port, &mut out) } {
            0 => Ok(out),
            rc => Err(DpdkError::Port {
                port: self.details.name.clone(),
                step: "rte_eth_stats_get",
                code: -rc,
            }),
        }
    }

    /// Whether the port says its link is up.
    pub fn link_up(&self) -> bool {
        // SAFETY: a started port.
        unsafe { sys::tw_dpdk_link_up(self.port) == 1 }
    }

    /// Mbufs free in the pool (for leak checks: it is back to its start
    /// value, less the RX ring's, when the loop is idle).
    pub fn free_mbufs(&self) -> u32 {
        // SAFETY: a live mempool.
        unsafe { sys::tw_dpdk_pool_avail(self.pool) }
    }

    /// Send what smoltcp queued: one `rte_eth_tx_burst` (more only if the
    /// port took part of it). Call after every `Interface::poll`.
    pub fn commit(&mut self) {
        if self.tx.queued > 0 {
            self.tx.flush();
        }
    }

    /// Whether a received packet is waiting (polls the port when the last
    /// burst is used up).
    pub fn has_rx(&mut self) -> bool {
        self.rx_next < self.rx_len || self.refill()
    }

    /// The next burst from the port; whether it brought anything.
    fn refill(&mut self) -> bool {
        // SAFETY: `rx` has room for BURST mbuf pointers; the ones the port writes
        // are ours to free. The previous burst is all consumed (rx_next == rx_len).
        let n = unsafe { sys::tw_dpdk_rx_burst(self.port, 0, self.rx.as_mut_ptr(), BURST as u16) };
        self.rx_next = 0;
        self.rx_len = usize::from(n);
        if n > 0 {
            self.tx.stats.rx_bursts += 1;
        }
        n > 0
    }

    /// The next good received packet: its mbuf and bytes.
    fn next_rx(&mut self) -> Option<(*mut Mbuf, *const u8, usize)> {
        loop {
            if self.rx_next == self.rx_len && !self.refill() {
                return None;
            }
            let m = self.rx[self.rx_next];
            self.rx_next += 1;
            let mut len = 0u16;
            // SAFETY: `m` is a received mbuf we own until freed.
            let data = unsafe { sys::tw_dpdk_rx_data(m, &mut len) };
            let ok = if data.is_null() {
                self.tx.stats.rx_multi_segment += 1;
                false
                // SAFETY: as above; the check reads the packet in place.
            } else if self.rx_check && unsafe { sys::tw_dpdk_rx_checksum_ok(m) } == 0 {
                self.tx.stats.rx_bad_checksum += 1;
                false
            } else {
                true
            };
            if ok {
                self.tx.stats.rx_packets += 1;
                return Some((m, data, usize::from(len)));
            }
            // SAFETY: ours, not handed out.
            unsafe { sys::tw_dpdk_mbuf_free(m) };
        }
    }
}

/// smoltcp's setting for a checksum the port checks (`rx`) and/or computes (`tx`).
fn checksum(rx: bool, tx: bool) -> Checksum {
    match (rx, tx) {
        (true, true) => Checksum::None,
        // smoltcp computes it on send, the port checks it.
        (true, false) => Checksum::Tx,
        // smoltcp checks it on receive, the port computes it.
        (false, true) => Checksum::Rx,
        (false, false) => Checksum::Both,
    }
}

impl Drop for DpdkDevice {
    fn drop(&mut self) {
        // SAFETY: the mbufs in rx[rx_next..rx_len] and the TX queue are ours;
        // then the port is stopped and closed (its driver returns the mbufs it
        // holds to the pool) before the pool is freed. No token outlives `self`.
        unsafe {
            for &m in &self.rx[self.rx_next..self.rx_len] {
                sys::tw_dpdk_mbuf_free(m);
            }
            sys::tw_dpdk_mbuf_free_bulk(self.tx.queue.as_mut_ptr(), self.tx.queued as u32);
            sys::tw_dpdk_port_close(self.port);
            sys::tw_dpdk_pool_free(self.pool);
            if let Some(name) = &self.hotplugged {
                sys::tw_dpdk_vdev_remove(name.as_ptr());
            }
        }
        // Then `rings` (if the last user), then `_dpdk` (EAL, if the last user).
        self.rings.take();
    }
}

impl phy::Device for DpdkDevice {
    type RxToken<'a>
        = DpdkRxToken
    where
        Self: 'a;
    type TxToken<'a>
        = DpdkTxToken<'a>
    where
        Self: 'a;

    fn receive(&mut self, _now: Instant) -> Option<(DpdkRxToken, DpdkTxToken<'_>)> {
        let (mbuf, data, len) = self.next_rx()?;
        Some((
            DpdkRxToken { mbuf, data, len },
            DpdkTxToken { side: &mut self.tx },
        ))
    }

    fn transmit(&mut self, _now: Instant) -> Option<DpdkTxToken<'_>> {
        if !self.tx.has_room() {
            return None;
        }
        Some(DpdkTxToken { side: &mut self.tx })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        self.caps.clone()
    }
}

/// A received packet, read in place in its mbuf; the mbuf is freed when the
/// token is consumed (or dropped).
#[derive(Debug)]
pub struct DpdkRxToken {
    mbuf: *mut Mbuf,
    data: *const u8,
    len: usize,
}

impl phy::RxToken for DpdkRxToken {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        // SAFETY: `data..data+len` is the mbuf's one segment of packet data; the
        // mbuf is this token's until its drop frees it, after `f` returns.
        let packet = unsafe { std::slice::from_raw_parts(self.data, self.len) };
        f(packet)
    }
}

impl Drop for DpdkRxToken {
    fn drop(&mut self) {
        // SAFETY: the token owns the mbuf; nothing borrows its data any more.
        unsafe { sys::tw_dpdk_mbuf_free(self.mbuf) };
    }
}

/// Room to send one packet: a fresh mbuf is taken when smoltcp writes it.
#[derive(Debug)]
pub struct DpdkTxToken<'a> {
    side: &'a mut TxSide,
}

impl phy::TxToken for DpdkTxToken<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let side = self.side;
        // A receive's reply may find the queue full: a burst first.
        let room = side.has_room();
        let mbuf = if !room {
            side.stats.tx_ring_full += 1;
            core::ptr::null_mut()
        } else if len > side.room {
            side.stats.tx_oversize += 1;
            core::ptr::null_mut()
        } else {
            // SAFETY: a live mempool.
            let m = unsafe { sys::tw_dpdk_mbuf_alloc(side.pool) };
            if m.is_null() {
                side.stats.tx_no_mbuf += 1;
            }
            m
        };
        if mbuf.is_null() {
            // Let smoltcp build the packet somewhere and drop it (TCP resends).
            let n = len.min(side.scratch.len());
            return f(&mut side.scratch[..n]);
        }
        // SAFETY: a fresh mbuf with room for `len` (<= room) bytes: append returns
        // a pointer to `len` writable bytes inside it.
        let data = unsafe { sys::tw_dpdk_tx_data(mbuf, len as u16) };
        if data.is_null() {
            // Never with `len <= room`; dropped like an oversize packet.
            // SAFETY: the mbuf is ours and queued nowhere.
            unsafe { sys::tw_dpdk_mbuf_free(mbuf) };
            side.stats.tx_oversize += 1;
            let n = len.min(side.scratch.len());
            return f(&mut side.scratch[..n]);
        }
        // SAFETY: `data` points at `len` bytes of the mbuf, which only this
        // token holds until it is queued below.
        let buf = unsafe { std::slice::from_raw_parts_mut(data, len) };
        let r = f(buf);
        if side.offloads != 0 {
            // SAFETY: the mbuf holds the packet smoltcp just wrote.
            unsafe { sys::tw_dpdk_tx_checksum_offload(mbuf, side.offloads) };
        }
        side.queue[side.queued] = mbuf;
        side.queued += 1;
        r
    }
}

impl crate::eth::EthDevice for DpdkDevice {
    fn mac(&self) -> [u8; 6] {
        DpdkDevice::mac(self)
    }

    /// One `rte_eth_tx_burst` of what smoltcp queued.
    fn commit(&mut self) -> std::io::Result<()> {
        DpdkDevice::commit(self);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smoltcp::phy::ChecksumCapabilities;
    use smoltcp::wire::{
        EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpProtocol, Ipv4Address,
        Ipv4Packet, Ipv4Repr, TcpControl, TcpPacket, TcpRepr, TcpSeqNumber,
    };
    use tickwire_conformance::{PeerError, skip_or_fail};

    const SRC: Ipv4Address = Ipv4Address::new(10, 79, 0, 1);
    const DST: Ipv4Address = Ipv4Address::new(10, 79, 0, 2);

    /// An Ethernet + IPv4 + TCP frame as smoltcp builds it with `caps`.
    fn frame(caps: &ChecksumCapabilities) -> Vec<u8> {
        let payload = b"tickwire: checksums the port fills in";
        let tcp = TcpRepr {
            src_port: 49152,
            dst_port: 9001,
            control: TcpControl::Psh,
            seq_number: TcpSeqNumber(0x0102_0304),
            ack_number: Some(TcpSeqNumber(0x0a0b_0c0d)),
            window_len: 4096,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload,
        };
        let ip = Ipv4Repr {
            src_addr: SRC,
            dst_addr: DST,
            next_header: IpProtocol::Tcp,
            payload_len: tcp.buffer_len(),
            hop_limit: 64,
        };
        let eth = EthernetRepr {
            src_addr: EthernetAddress([2, 0, 0, 0, 0, 1]),
            dst_addr: EthernetAddress([2, 0, 0, 0, 0, 2]),
            ethertype: EthernetProtocol::Ipv4,
        };
        let mut buf = vec![0u8; eth.buffer_len() + ip.buffer_len() + tcp.buffer_len()];
        let mut f = EthernetFrame::new_unchecked(&mut buf[..]);
        eth.emit(&mut f);
        let mut p = Ipv4Packet::new_unchecked(f.payload_mut());
        ip.emit(&mut p, caps);
        let mut t = TcpPacket::new_unchecked(p.payload_mut());
        tcp.emit(&mut t, &SRC.into(), &DST.into(), caps);
        buf
    }

    /// The C side's offload path (l2/l3 lengths, TX flags, the pseudo-header
    /// sum in the TCP field) finished as a NIC would, and its receive check,
    /// against smoltcp's own checksums. No virtual device offers checksum
    /// offload, so this is where that path is proven.
    #[test]
    fn offload_path_gives_the_checksums_smoltcp_computes() {
        let test = "offload_path_gives_the_checksums_smoltcp_computes";
        let mut eal = super::super::EalConfig::virtual_devices("0@(0-1)", 64);
        eal.file_prefix = Some(format!("tickwire-unit-{}", std::process::id()));
        let dpdk = Dpdk::init(&eal).map_err(|e| PeerError::Absent(e.to_string()));
        let Some(_dpdk) = skip_or_fail(test, dpdk) else {
            return;
        };
        let name = CString::new("tw_unit_pool").unwrap();
        // SAFETY: EAL is up; the pool is freed at the end of the test.
        let pool = unsafe { sys::tw_dpdk_pool_create(name.as_ptr(), 63, 0, 2048 + 128, -1) };
        assert!(!pool.is_null(), "mempool");

        let mut zero = ChecksumCapabilities::default();
        zero.ipv4 = Checksum::Rx;
        zero.tcp = Checksum::Rx;
        let offloaded = frame(&zero);
        let full = frame(&ChecksumCapabilities::default());
        assert_ne!(offloaded, full, "smoltcp left the checksums to the port");

        // SAFETY: a live pool; the mbuf is written within the `len` bytes
        // append returned, read back as one segment, and freed once.
        unsafe {
            let m = sys::tw_dpdk_mbuf_alloc(pool);
            assert!(!m.is_null());
            let data = sys::tw_dpdk_tx_data(m, offloaded.len() as u16);
            std::ptr::copy_nonoverlapping(offloaded.as_ptr(), data, offloaded.len());
            let bits = bit(sys::TX_IPV4_CKSUM) | bit(sys::TX_TCP_CKSUM);
            sys::tw_dpdk_tx_checksum_offload(m, bits);
            sys::tw_dpdk_tx_checksum_finish(m);
            let mut len = 0u16;
            let out = sys::tw_dpdk_rx_data(m, &mut len);
            let out = std::slice::from_raw_parts_mut(out.cast_mut(), usize::from(len));
            assert_eq!(out, &full[..], "the port's checksums are smoltcp's");
            assert_eq!(sys::tw_dpdk_rx_checksum_ok(m), 1, "a good frame passes");
            let last = out.len() - 1;
            out[last] ^= 1;
            assert_eq!(sys::tw_dpdk_rx_checksum_ok(m), 0, "a bad TCP checksum");
            out[last] ^= 1;
            out[14 + 8] ^= 1; // the TTL: the IPv4 header checksum no longer holds
            assert_eq!(sys::tw_dpdk_rx_checksum_ok(m), 0, "a bad IPv4 checksum");
            sys::tw_dpdk_mbuf_free(m);
            assert_eq!(sys::tw_dpdk_pool_avail(pool), 63, "every mbuf back");
            sys::tw_dpdk_pool_free(pool);
        }
    }
}
