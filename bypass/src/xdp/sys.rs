//! The few system calls AF_XDP needs, as thin safe wrappers over `libc`:
//! socket options of `SOL_XDP`, the ring mappings, `bind`, the wake-up kicks,
//! interface look-ups, and the `bpf(2)` commands that load and attach the
//! redirect program. Nothing here keeps state; every file descriptor is an
//! [`OwnedFd`] (closed on drop) and every mapping a [`Mapping`] (unmapped on drop).

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::prelude::rust_2024::*;
use std::ptr::NonNull;
use std::{format, vec};

/// `-1` into the last OS error.
fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A fresh `AF_XDP` socket.
pub(crate) fn xsk_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes plain integers; a non-negative result is a new fd we own.
    let fd = cvt(unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `fd` was just returned by socket(2) and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `setsockopt(fd, SOL_XDP, opt, value)`.
pub(crate) fn set_xdp_opt<T>(fd: &OwnedFd, opt: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live `T` of `size_of::<T>()` bytes the kernel only reads.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            opt,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// The ring offsets (`XDP_MMAP_OFFSETS`).
pub(crate) fn mmap_offsets(fd: &OwnedFd) -> io::Result<libc::xdp_mmap_offsets> {
    // SAFETY: all-zero is a valid value of this plain C struct of integers.
    let mut off: libc::xdp_mmap_offsets = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::xdp_mmap_offsets>() as libc::socklen_t;
    // SAFETY: `off` has `len` writable bytes; the kernel writes at most `len` and updates it.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            libc::XDP_MMAP_OFFSETS,
            (&mut off as *mut libc::xdp_mmap_offsets).cast(),
            &mut len,
        )
    })?;
    if len as usize != size_of::<libc::xdp_mmap_offsets>() {
        // Kernels before 5.4 answer without the `flags` offsets (no need_wakeup).
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "kernel too old: XDP_MMAP_OFFSETS without ring flags (need Linux 5.4+)",
        ));
    }
    Ok(off)
}

/// A shared mapping of `len` bytes, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a mapping is plain memory; who may touch which bytes is up to its users
// (the rings synchronize with the kernel through atomics).
unsafe impl Send for Mapping {}

impl Mapping {
    /// Map `len` bytes of `fd` at page offset `offset` (a ring of an XDP socket).
    pub(crate) fn ring(fd: &OwnedFd, len: usize, offset: u64) -> io::Result<Self> {
        // SAFETY: a fresh shared mapping chosen by the kernel; it aliases nothing of ours.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        Self::from_mmap(p, len)
    }

    /// `len` bytes of anonymous, page-aligned, zeroed memory.
    pub(crate) fn anonymous(len: usize) -> io::Result<Self> {
        // SAFETY: a fresh private anonymous mapping; it aliases nothing of ours.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        Self::from_mmap(p, len)
    }

    fn from_mmap(p: *mut libc::c_void, len: usize) -> io::Result<Self> {
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        NonNull::new(p.cast())
            .map(|ptr| Mapping { ptr, len })
            .ok_or_else(|| io::Error::other("mmap returned null"))
    }

    /// The first byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned; nothing borrows the
        // memory any more (its owners are being dropped).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Bind the socket to `queue` of interface `ifindex` with `flags`.
pub(crate) fn bind(fd: &OwnedFd, ifindex: u32, queue: u32, flags: u16) -> io::Result<()> {
    // SAFETY: all-zero is a valid sockaddr_xdp.
    let mut sa: libc::sockaddr_xdp = unsafe { std::mem::zeroed() };
    sa.sxdp_family = libc::AF_XDP as u16;
    sa.sxdp_flags = flags;
    sa.sxdp_ifindex = ifindex;
    sa.sxdp_queue_id = queue;
    // SAFETY: `sa` is a live sockaddr_xdp of the length passed.
    cvt(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_xdp).cast(),
            size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Ask the kernel to transmit what the TX ring holds (copy mode, or a
/// zero-copy driver that asked for a wake-up). Never blocks. `Ok(false)`: the
/// kernel was busy or out of buffers; the frames stay in the ring for the
/// next kick (libxdp's samples treat these errors the same way).
pub(crate) fn kick_tx(fd: RawFd) -> io::Result<bool> {
    // SAFETY: a zero-length send with no buffer and no address.
    let r = unsafe {
        libc::sendto(
            fd,
            std::ptr::null(),
            0,
            libc::MSG_DONTWAIT,
            std::ptr::null(),
            0,
        )
    };
    if r >= 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS | libc::ENETDOWN) => Ok(false),
        _ => Err(e),
    }
}

/// The system's page size (a UMEM must be aligned to it; a frame is at most one).
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096)
}

/// Wake a driver that asked for fill-ring entries (zero-copy mode). Never blocks.
pub(crate) fn kick_rx(fd: RawFd) -> io::Result<()> {
    // SAFETY: a zero-length receive with no buffer and no address.
    let r = unsafe {
        libc::recvfrom(
            fd,
            std::ptr::null_mut(),
            0,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if r >= 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS) => Ok(()),
        _ => Err(e),
    }
}

/// Wait up to `timeout_ms` (-1: forever) for a frame on the RX ring.
pub(crate) fn wait_readable(fd: RawFd, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one live pollfd.
    let n = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(n > 0)
}

/// The index of interface `name` in the calling thread's network namespace.
pub(crate) fn ifindex(name: &str) -> io::Result<u32> {
    let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a NUL-terminated string.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        0 => Err(io::Error::last_os_error()),
        i => Ok(i),
    }
}

/// `ioctl(request)` with an `ifreq` naming `name` (and set up further by
/// `prepare`), on a datagram socket of the calling thread's network
/// namespace; returns the `ifreq` as the kernel left it.
fn if_ioctl(
    name: &str,
    request: libc::c_ulong,
    prepare: impl FnOnce(&mut libc::ifreq),
) -> io::Result<libc::ifreq> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: socket(2) with plain integers; a non-negative result is a new fd we own.
    let fd = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `fd` was just returned by socket(2).
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: all-zero is a valid ifreq.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    prepare(&mut req);
    // SAFETY: `req` is a live ifreq with a NUL-terminated name; SIOCGIFHWADDR and
    // SIOCGIFMTU write into its union, SIOCETHTOOL reads and writes the
    // ethtool struct its `ifru_data` points to, which the caller keeps alive.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), request as _, &mut req) })?;
    Ok(req)
}

/// The Ethernet address of interface `name` in the calling thread's network namespace.
pub(crate) fn mac_address(name: &str) -> io::Result<[u8; 6]> {
    let req = if_ioctl(name, libc::SIOCGIFHWADDR, |_| {})?;
    // SAFETY: SIOCGIFHWADDR filled the hwaddr member of the union.
    let data = unsafe { req.ifr_ifru.ifru_hwaddr.sa_data };
    let mut mac = [0u8; 6];
    for (m, d) in mac.iter_mut().zip(data) {
        *m = d as u8;
    }
    Ok(mac)
}

/// The IP MTU of interface `name` in the calling thread's network namespace.
pub(crate) fn mtu(name: &str) -> io::Result<u32> {
    let req = if_ioctl(name, libc::SIOCGIFMTU, |_| {})?;
    // SAFETY: SIOCGIFMTU filled the mtu member of the union.
    let mtu = unsafe { req.ifr_ifru.ifru_mtu };
    u32::try_from(mtu).map_err(|_| io::Error::other("negative MTU"))
}

/// Turn off transmit checksum offload on interface `name` (calling thread's
/// namespace), as `ethtool -K name tx off` does: the kernel then fills in
/// every TCP/UDP checksum before a frame leaves, instead of leaving it to
/// hardware that a virtual device does not have.
pub(crate) fn disable_tx_checksum(name: &str) -> io::Result<()> {
    /// `ETHTOOL_STXCSUM`.
    const ETHTOOL_STXCSUM: u32 = 0x17;
    /// `struct ethtool_value`.
    #[repr(C)]
    struct EthtoolValue {
        cmd: u32,
        data: u32,
    }
    let mut value = EthtoolValue {
        cmd: ETHTOOL_STXCSUM,
        data: 0,
    };
    // The kernel reads (and may write) `value` during the call, which `if_ioctl` makes
    // while `value` is alive.
    if_ioctl(name, libc::SIOCETHTOOL, |req| {
        req.ifr_ifru.ifru_data = (&mut value as *mut EthtoolValue).cast();
    })
    .map(drop)
}

/// The kernel's counters of an XDP socket (`XDP_STATISTICS`).
pub(crate) fn statistics(fd: &OwnedFd) -> io::Result<libc::xdp_statistics> {
    // SAFETY: all-zero is a valid value of this plain C struct of integers.
    let mut st: libc::xdp_statistics = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::xdp_statistics>() as libc::socklen_t;
    // SAFETY: `st` has `len` writable bytes; the kernel writes at most `len`.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            libc::XDP_STATISTICS,
            (&mut st as *mut libc::xdp_statistics).cast(),
            &mut len,
        )
    })?;
    Ok(st)
}

/// The `bpf(2)` commands used here.
const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;

/// `BPF_MAP_TYPE_XSKMAP`: queue index -> XDP socket.
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
/// `BPF_PROG_TYPE_XDP`.
const BPF_PROG_TYPE_XDP: u32 = 6;
/// `BPF_XDP` (attach type of an XDP link).
const BPF_XDP: u32 = 37;

/// `union bpf_attr`, as large as any command here needs and zeroed past the
/// fields a command uses (the kernel checks that unused bytes are zero).
#[repr(C, align(8))]
struct BpfAttr([u8; 128]);

impl BpfAttr {
    fn new() -> Self {
        BpfAttr([0; 128])
    }
    fn u32_at(&mut self, at: usize, v: u32) -> &mut Self {
        self.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64_at(&mut self, at: usize, v: u64) -> &mut Self {
        self.0[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
}

fn bpf(cmd: libc::c_long, attr: &mut BpfAttr) -> io::Result<libc::c_int> {
    // SAFETY: `attr` is a live, zero-padded bpf_attr of the size passed; the
    // pointers stored in it (by the callers below) point to live memory.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut BpfAttr,
            size_of::<BpfAttr>() as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as libc::c_int)
    }
}

fn owned(fd: libc::c_int) -> OwnedFd {
    // SAFETY: `fd` was just returned by bpf(2) as a new descriptor.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// A new XSKMAP of `entries` slots (one per queue).
pub(crate) fn xskmap_create(entries: u32) -> io::Result<OwnedFd> {
    let mut a = BpfAttr::new();
    a.u32_at(0, BPF_MAP_TYPE_XSKMAP)
        .u32_at(4, 4)
        .u32_at(8, 4)
        .u32_at(12, entries);
    // map_name at 32 (after map_flags, inner_map_fd, numa_node).
    a.0[32..32 + 8].copy_from_slice(b"tw_xsks\0");
    bpf(BPF_MAP_CREATE, &mut a).map(owned)
}

/// `map[key] = value` (an XSKMAP's value is the XDP socket's fd).
pub(crate) fn map_update(map: &OwnedFd, key: u32, value: u32) -> io::Result<()> {
    let mut a = BpfAttr::new();
    a.u32_at(0, map.as_raw_fd() as u32)
        .u64_at(8, &key as *const u32 as u64)
        .u64_at(16, &value as *const u32 as u64)
        .u64_at(24, 0);
    bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(drop)
}

/// Remove `map[key]`.
pub(crate) fn map_delete(map: &OwnedFd, key: u32) -> io::Result<()> {
    let mut a = BpfAttr::new();
    a.u32_at(0, map.as_raw_fd() as u32)
        .u64_at(8, &key as *const u32 as u64);
    bpf(BPF_MAP_DELETE_ELEM, &mut a).map(drop)
}

/// Load an XDP program of `insns` (8-byte eBPF instructions); on failure the
/// verifier's log is in the error.
pub(crate) fn prog_load_xdp(insns: &[u64], name: &[u8]) -> io::Result<OwnedFd> {
    let license = b"Dual MIT/GPL\0";
    let mut log = vec![0u8; 16 * 1024];
    let mut a = BpfAttr::new();
    a.u32_at(0, BPF_PROG_TYPE_XDP)
        .u32_at(4, insns.len() as u32)
        .u64_at(8, insns.as_ptr() as u64)
        .u64_at(16, license.as_ptr() as u64)
        .u32_at(24, 1)
        .u32_at(28, log.len() as u32)
        .u64_at(32, log.as_mut_ptr() as u64)
        .u32_at(68, BPF_XDP);
    let n = name.len().min(15);
    a.0[48..48 + n].copy_from_slice(&name[..n]);
    bpf(BPF_PROG_LOAD, &mut a).map(owned).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        io::Error::new(
            e.kind(),
            format!(
                "loading the XDP program: {e}; verifier: {}",
                String::from_utf8_lossy(&log[..end])
            ),
        )
    })
}

/// Attach `prog` to interface `ifindex` (calling thread's namespace) as a
/// BPF link with `flags` (`XDP_FLAGS_SKB_MODE` or `XDP_FLAGS_DRV_MODE`): the
/// program stays attached exactly as long as the returned fd is open.
pub(crate) fn xdp_link_create(prog: &OwnedFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
    let mut a = BpfAttr::new();
    a.u32_at(0, prog.as_raw_fd() as u32)
        .u32_at(4, ifindex)
        .u32_at(8, BPF_XDP)
        .u32_at(12, flags);
    bpf(BPF_LINK_CREATE, &mut a).map(owned)
}
