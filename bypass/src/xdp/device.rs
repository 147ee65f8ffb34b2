//! A smoltcp `phy::Device` over one AF_XDP socket.
//!
//! The UMEM (the packet memory shared with the kernel) is the caller's: a
//! page-aligned slice, cut into frames of [`XdpConfig::frame_size`] bytes.
//! The first half of the frames is lent to the kernel for receiving (the
//! fill ring), the second half is kept for sending.
//!
//! - `receive` takes the next descriptor off the RX ring; its [`XdpRxToken`]
//!   hands smoltcp the frame where the kernel (or the NIC) put it, then
//!   returns the frame to the fill ring.
//! - `transmit` takes a free frame; the [`XdpTxToken`] lets smoltcp write the
//!   packet straight into it and queues its descriptor on the TX ring.
//! - Ring updates are batched: the RX ring is released and the fill ring
//!   published when the RX ring runs dry (or every [`BATCH`] frames); TX
//!   descriptors are published, and the kernel kicked, by [`XdpDevice::commit`]
//!   (once per turn of the poll loop, or every [`BATCH`] frames). Completed TX
//!   frames are reaped only when the free list runs out.
//!
//! Nothing is allocated after [`XdpDevice::open`].

use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::prelude::rust_2024::*;
use std::vec;

use smoltcp::phy::{self, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

use super::ring::{Consumer, Producer};
use super::sys;

/// Ring updates are published at least this often (in frames).
pub const BATCH: u32 = 32;

/// Bytes the kernel keeps in front of every received frame (`XDP_PACKET_HEADROOM`).
const KERNEL_HEADROOM: usize = 256;

/// How the socket binds to its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindMode {
    /// Zero-copy if the driver offers it, copy mode otherwise.
    Auto,
    /// Copy mode (`XDP_COPY`): works on every interface; the kernel copies
    /// each frame between its own buffers and the UMEM.
    Copy,
    /// Zero-copy (`XDP_ZEROCOPY`): the NIC DMAs straight into the UMEM. Needs
    /// a driver that supports it and the program attached in native mode.
    ZeroCopy,
}

/// Settings of an [`XdpDevice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XdpConfig {
    /// The NIC queue to bind to (its frames must be steered to it; see the README).
    pub queue: u32,
    /// Bytes per UMEM frame: a power of two from 2048 to the page size (4096 on x86_64).
    pub frame_size: u32,
    /// Entries of each of the four rings (a power of two).
    pub ring_size: u32,
    /// Copy or zero-copy.
    pub mode: BindMode,
}

impl Default for XdpConfig {
    fn default() -> Self {
        XdpConfig {
            queue: 0,
            frame_size: 4096,
            ring_size: 1024,
            mode: BindMode::Auto,
        }
    }
}

/// Counters of the user-space side of the socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames handed to smoltcp.
    pub rx_frames: u64,
    /// Frames queued for sending.
    pub tx_frames: u64,
    /// `sendto(2)` calls that asked the kernel to send (the only system call
    /// on the data path in copy mode).
    pub tx_kicks: u64,
    /// `recvfrom(2)` calls that woke a driver waiting for fill-ring entries.
    pub rx_wakeups: u64,
    /// `poll(2)` calls made by [`XdpDevice::wait`].
    pub waits: u64,
    /// Packets smoltcp wanted to send while no TX frame was free (dropped;
    /// TCP retransmits them).
    pub tx_no_frame: u64,
    /// Packets larger than a frame (dropped; never expected: the MTU is reported).
    pub tx_oversize: u64,
    /// RX descriptors pointing outside the UMEM (dropped; never expected).
    pub rx_invalid: u64,
}

/// Page-aligned, zeroed memory for a UMEM, unmapped on drop. Any page-aligned
/// `&mut [u8]` does as well (a huge page, a buffer of the application's own).
#[derive(Debug)]
pub struct UmemArea(sys::Mapping);

impl UmemArea {
    /// `frames` frames of `frame_size` bytes.
    pub fn new(frames: usize, frame_size: u32) -> io::Result<Self> {
        let len = frames
            .checked_mul(frame_size as usize)
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        sys::Mapping::anonymous(len).map(UmemArea)
    }

    /// The memory.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` readable, writable bytes that only this
        // value hands out, and the `&mut self` borrow keeps it unique.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_ptr(), self.0.len()) }
    }
}

/// The UMEM as raw parts, shared by the tokens (each touches only its own frame).
#[derive(Debug, Clone, Copy)]
struct Umem {
    base: *mut u8,
    len: usize,
    frame_size: u64,
}

impl Umem {
    /// The frame holding `addr` (an RX descriptor's address may point past its start).
    fn frame_of(&self, addr: u64) -> u64 {
        addr & !(self.frame_size - 1)
    }
}

/// The receive half: RX ring in, fill ring out.
#[derive(Debug)]
struct RxSide {
    rx: Consumer<libc::xdp_desc>,
    fill: Producer<u64>,
    /// Frames taken off the RX ring since the last release.
    batch: u32,
}

/// The send half: TX ring out, completion ring in, free frames.
#[derive(Debug)]
struct TxSide {
    tx: Producer<libc::xdp_desc>,
    comp: Consumer<u64>,
    free: Vec<u64>,
    /// Always kick after publishing (copy mode), or only when the ring asks.
    always_kick: bool,
    /// The last kick found the kernel busy: kick again even with nothing new.
    kick_pending: bool,
    fd: RawFd,
    stats: Stats,
    /// Where a packet goes when no frame is free or it does not fit (dropped).
    scratch: Box<[u8]>,
}

impl TxSide {
    /// Move completed frames back to the free list.
    fn reap(&mut self) {
        while let Some(addr) = self.comp.pop() {
            self.free.push(addr);
        }
        self.comp.release();
    }

    /// A free frame, reaping completions (and flushing our own queue) if none is left.
    fn take_frame(&mut self) -> Option<u64> {
        if self.free.is_empty() {
            self.reap();
        }
        if self.free.is_empty() && self.tx.unsubmitted() > 0 {
            // Our own unsent frames hold the pool: send them, then look again.
            let _ = self.commit();
            self.reap();
        }
        self.free.pop()
    }

    /// Publish queued descriptors and kick the kernel if it needs it.
    fn commit(&mut self) -> io::Result<()> {
        if self.tx.unsubmitted() == 0 && !self.kick_pending {
            return Ok(());
        }
        self.tx.submit();
        if self.always_kick || self.kick_pending || self.tx.needs_wakeup() {
            // Copy mode sends at most 32 frames per call and says EAGAIN when more
            // are waiting: a few more kicks, then leave the rest to the next commit.
            for _ in 0..4 {
                self.stats.tx_kicks += 1;
                self.kick_pending = !sys::kick_tx(self.fd)?;
                if !self.kick_pending {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// A smoltcp Ethernet device over one AF_XDP socket bound to one queue.
#[derive(Debug)]
pub struct XdpDevice<'u> {
    rx: RxSide,
    tx: TxSide,
    umem: Umem,
    mtu: usize,
    mac: [u8; 6],
    zero_copy: bool,
    fd: OwnedFd,
    _umem: PhantomData<&'u mut [u8]>,
}

// SAFETY: the device owns its socket and rings and holds the only borrow of
// the UMEM for `'u`; nothing in it is tied to the thread that opened it.
unsafe impl Send for XdpDevice<'_> {}

impl<'u> XdpDevice<'u> {
    /// Open an AF_XDP socket on `cfg.queue` of interface `ifname` (in the
    /// calling thread's network namespace) with `umem` as its packet memory
    /// (page-aligned, a whole number of frames, at least 4 of them). Frames
    /// reach it once an [`XdpProgram`](super::XdpProgram) on the interface
    /// has it inserted at that queue. Needs CAP_NET_RAW (root in practice).
    pub fn open(ifname: &str, umem: &'u mut [u8], cfg: XdpConfig) -> io::Result<Self> {
        let invalid = |m: &'static str| io::Error::new(io::ErrorKind::InvalidInput, m);
        let fs = cfg.frame_size as usize;
        let page = sys::page_size();
        if !fs.is_power_of_two() || fs < 2048 || fs > page {
            return Err(invalid(
                "frame size must be a power of two from 2048 to the page size",
            ));
        }
        if !cfg.ring_size.is_power_of_two() {
            return Err(invalid("ring size must be a power of two"));
        }
        if !(umem.as_ptr() as usize).is_multiple_of(page)
            || !umem.len().is_multiple_of(fs)
            || umem.len() < 4 * fs
        {
            return Err(invalid(
                "UMEM must be page-aligned and a whole number of frames (at least 4)",
            ));
        }
        let ifindex = sys::ifindex(ifname)?;
        let mac = sys::mac_address(ifname)?;
        let if_mtu = sys::mtu(ifname)? as usize;
        let area = (umem.as_mut_ptr(), umem.len());
        let bind = |mode| Self::bind(area, cfg, ifindex, mode, mac, if_mtu);
        match cfg.mode {
            BindMode::Copy => bind(libc::XDP_COPY),
            BindMode::ZeroCopy => bind(libc::XDP_ZEROCOPY),
            // A failed bind closes its socket (and unregisters the UMEM): start over.
            BindMode::Auto => bind(libc::XDP_ZEROCOPY).or_else(|_| bind(libc::XDP_COPY)),
        }
    }

    /// A socket over the UMEM `area` (the caller's `&'u mut [u8]`, as raw parts so
    /// that a failed attempt can be retried), bound with `mode`.
    fn bind(
        area: (*mut u8, usize),
        cfg: XdpConfig,
        ifindex: u32,
        mode: u16,
        mac: [u8; 6],
        if_mtu: usize,
    ) -> io::Result<Self> {
        let fs = cfg.frame_size as usize;
        let (base, len) = area;
        let frames = len / fs;
        let fd = sys::xsk_socket()?;
        let reg = libc::xdp_umem_reg {
            addr: base as u64,
            len: len as u64,
            chunk_size: cfg.frame_size,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        sys::set_xdp_opt(&fd, libc::XDP_UMEM_REG, &reg)?;
        let size = cfg.ring_size;
        sys::set_xdp_opt(&fd, libc::XDP_UMEM_FILL_RING, &size)?;
        sys::set_xdp_opt(&fd, libc::XDP_UMEM_COMPLETION_RING, &size)?;
        sys::set_xdp_opt(&fd, libc::XDP_RX_RING, &size)?;
        sys::set_xdp_opt(&fd, libc::XDP_TX_RING, &size)?;
        let off = sys::mmap_offsets(&fd)?;
        let rx = Consumer::map(&fd, &off.rx, size, libc::XDP_PGOFF_RX_RING as u64)?;
        let tx = Producer::map(&fd, &off.tx, size, libc::XDP_PGOFF_TX_RING as u64)?;
        let mut fill = Producer::map(&fd, &off.fr, size, libc::XDP_UMEM_PGOFF_FILL_RING)?;
        let comp = Consumer::map(&fd, &off.cr, size, libc::XDP_UMEM_PGOFF_COMPLETION_RING)?;

        // Half the frames (at most a ring's worth) for receiving, the rest for sending.
        let rx_frames = (frames / 2).min(size as usize);
        for i in 0..rx_frames {
            fill.push((i * fs) as u64);
        }
        fill.submit();
        let tx_frames = (frames - rx_frames).min(size as usize);
        let free: Vec<u64> = (rx_frames..rx_frames + tx_frames)
            .rev()
            .map(|i| (i * fs) as u64)
            .collect();

        sys::bind(&fd, ifindex, cfg.queue, mode | libc::XDP_USE_NEED_WAKEUP)?;
        let zero_copy = mode == libc::XDP_ZEROCOPY;
        // The largest Ethernet frame (header included) smoltcp may build:
        // the interface's MTU, bounded by what a frame holds after the headroom.
        let mtu = (if_mtu + 14).min(fs - KERNEL_HEADROOM);
        let raw = fd.as_raw_fd();
        Ok(XdpDevice {
            rx: RxSide { rx, fill, batch: 0 },
            tx: TxSide {
                tx,
                comp,
                free,
                always_kick: !zero_copy,
                kick_pending: false,
                fd: raw,
                stats: Stats::default(),
                scratch: vec![0u8; fs].into_boxed_slice(),
            },
            umem: Umem {
                base,
                len,
                frame_size: fs as u64,
            },
            mtu,
            mac,
            zero_copy,
            fd,
            _umem: PhantomData,
        })
    }

    /// The interface's Ethernet address (smoltcp's hardware address).
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// Whether the socket is bound in zero-copy mode.
    pub fn is_zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// The largest Ethernet frame smoltcp is told it may send.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// User-space counters.
    pub fn stats(&self) -> Stats {
        self.tx.stats
    }

    /// The kernel's counters for this socket (drops for want of fill-ring
    /// frames or RX-ring room, invalid descriptors).
    pub fn kernel_stats(&self) -> io::Result<libc::xdp_statistics> {
        sys::statistics(&self.fd)
    }

    /// Publish queued TX descriptors and kick the kernel (one `sendto` in copy
    /// mode). Call after every `Interface::poll`; `transmit` also does it every
    /// [`BATCH`] frames.
    pub fn commit(&mut self) -> io::Result<()> {
        self.tx.commit()?;
        self.rx.fill.submit();
        if self.zero_copy && self.rx.fill.needs_wakeup() {
            self.tx.stats.rx_wakeups += 1;
            sys::kick_rx(self.fd.as_raw_fd())?;
        }
        Ok(())
    }

    /// Whether a received frame is waiting.
    pub fn has_rx(&mut self) -> bool {
        self.rx.rx.ready() > 0
    }

    /// Sleep in `poll(2)` until a frame arrives or `timeout_ms` passes
    /// (-1: no limit); for loops that do not busy-poll.
    pub fn wait(&mut self, timeout_ms: i32) -> io::Result<bool> {
        if self.has_rx() {
            return Ok(true);
        }
        self.rx.rx.release();
        self.rx.fill.submit();
        self.tx.stats.waits += 1;
        sys::wait_readable(self.fd.as_raw_fd(), timeout_ms)
    }

    /// The next RX descriptor, releasing the ring and publishing the fill ring
    /// when it is empty or a batch is done.
    fn next_rx(&mut self) -> Option<libc::xdp_desc> {
        if self.rx.batch >= BATCH {
            self.rx.rx.release();
            self.rx.fill.submit();
            self.rx.batch = 0;
        }
        loop {
            match self.rx.rx.pop() {
                Some(d) => {
                    self.rx.batch += 1;
                    let end = d.addr.checked_add(u64::from(d.len));
                    if end.is_some_and(|e| e <= self.umem.len as u64) {
                        return Some(d);
                    }
                    // Never from a well-behaved kernel: recycle and skip it.
                    self.tx.stats.rx_invalid += 1;
                    self.rx.fill.push(self.umem.frame_of(d.addr));
                }
                None => {
                    self.rx.rx.release();
                    self.rx.fill.submit();
                    self.rx.batch = 0;
                    return None;
                }
            }
        }
    }
}

impl AsRawFd for XdpDevice<'_> {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl phy::Device for XdpDevice<'_> {
    type RxToken<'a>
        = XdpRxToken<'a>
    where
        Self: 'a;
    type TxToken<'a>
        = XdpTxToken<'a>
    where
        Self: 'a;

    fn receive(&mut self, _now: Instant) -> Option<(XdpRxToken<'_>, XdpTxToken<'_>)> {
        let d = self.next_rx()?;
        self.tx.stats.rx_frames += 1;
        let frame = self.tx.take_frame();
        let umem = self.umem;
        Some((
            XdpRxToken {
                umem,
                addr: d.addr,
                len: d.len as usize,
                fill: &mut self.rx.fill,
            },
            XdpTxToken {
                umem,
                frame,
                side: &mut self.tx,
            },
        ))
    }

    fn transmit(&mut self, _now: Instant) -> Option<XdpTxToken<'_>> {
        if self.tx.tx.free() == 0 {
            let _ = self.tx.commit();
            if self.tx.tx.free() == 0 {
                return None;
            }
        }
        let frame = self.tx.take_frame()?;
        Some(XdpTxToken {
            umem: self.umem,
            frame: Some(frame),
            side: &mut self.tx,
        })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = self.mtu;
        caps.max_burst_size = Some(BATCH as usize);
        caps
    }
}

/// A received frame, read in place in the UMEM; the frame goes back to the
/// fill ring when the token is consumed (or dropped).
#[derive(Debug)]
pub struct XdpRxToken<'a> {
    umem: Umem,
    addr: u64,
    len: usize,
    fill: &'a mut Producer<u64>,
}

impl phy::RxToken for XdpRxToken<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        // SAFETY: `addr + len` lies inside the UMEM (checked in `next_rx`); the
        // frame came off the RX ring and is in no ring until this token gives it
        // back, so neither the kernel nor another token writes it meanwhile.
        let frame =
            unsafe { std::slice::from_raw_parts(self.umem.base.add(self.addr as usize), self.len) };
        f(frame)
        // Drop returns the frame to the fill ring.
    }
}

impl Drop for XdpRxToken<'_> {
    fn drop(&mut self) {
        // The fill ring holds every RX frame: it cannot be full.
        self.fill.push(self.umem.frame_of(self.addr));
    }
}

/// A free UMEM frame (if one was left) that smoltcp writes its packet into.
#[derive(Debug)]
pub struct XdpTxToken<'a> {
    umem: Umem,
    frame: Option<u64>,
    side: &'a mut TxSide,
}

impl phy::TxToken for XdpTxToken<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(mut self, len: usize, f: F) -> R {
        let fs = self.umem.frame_size as usize;
        let frame = match self.frame.take() {
            Some(addr) if len <= fs => addr,
            other => {
                // No frame, or the packet would not fit one: let smoltcp build it
                // in scratch space and drop it (TCP sends it again).
                if let Some(addr) = other {
                    self.side.free.push(addr);
                    self.side.stats.tx_oversize += 1;
                } else {
                    self.side.stats.tx_no_frame += 1;
                }
                let n = len.min(self.side.scratch.len());
                return f(&mut self.side.scratch[..n]);
            }
        };
        // SAFETY: `frame` is a whole frame inside the UMEM taken off the free list:
        // no ring holds it and no other token has it until it is queued below.
        let buf =
            unsafe { std::slice::from_raw_parts_mut(self.umem.base.add(frame as usize), len) };
        let r = f(buf);
        let queued = self.side.tx.push(libc::xdp_desc {
            addr: frame,
            len: len as u32,
            options: 0,
        });
        if queued {
            self.side.stats.tx_frames += 1;
            if self.side.tx.unsubmitted() >= BATCH {
                let _ = self.side.commit();
            }
        } else {
            // `transmit` checked for room; a receive's reply may find none.
            self.side.free.push(frame);
            self.side.stats.tx_no_frame += 1;
        }
        r
    }
}

impl Drop for XdpTxToken<'_> {
    fn drop(&mut self) {
        if let Some(addr) = self.frame.take() {
            self.side.free.push(addr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(umem: &mut [u8], cfg: XdpConfig) -> bool {
        XdpDevice::open("lo", umem, cfg).is_err_and(|e| e.kind() == io::ErrorKind::InvalidInput)
    }

    #[test]
    fn bad_umem_and_settings_are_refused_before_any_socket() {
        let mut area = UmemArea::new(8, 2048).unwrap();
        let cfg = XdpConfig {
            frame_size: 2048,
            ..XdpConfig::default()
        };
        let mem = area.as_mut_slice();
        assert!(refused(&mut mem[1..2049], cfg), "not page-aligned");
        assert!(refused(&mut mem[..3 * 2048], cfg), "fewer than 4 frames");
        assert!(refused(&mut mem[..4 * 2048 + 1], cfg), "not whole frames");
        let odd = XdpConfig {
            frame_size: 3000,
            ..cfg
        };
        assert!(refused(mem, odd), "frame size");
        let ring = XdpConfig {
            ring_size: 1000,
            ..cfg
        };
        assert!(refused(mem, ring), "ring size");
    }

    #[test]
    fn rx_descriptor_addresses_map_back_to_their_frame() {
        let u = Umem {
            base: std::ptr::null_mut(),
            len: 8 * 4096,
            frame_size: 4096,
        };
        assert_eq!(u.frame_of(3 * 4096 + 256), 3 * 4096);
        assert_eq!(u.frame_of(4096), 4096);
    }
}
