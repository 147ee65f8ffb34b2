//! The test environment the AF_XDP tests and benchmarks build for themselves:
//! two network namespaces joined by a veth pair, with private addresses
//! (10.77.0.0/24) that exist only inside those namespaces.
//!
//! ```text
//!  namespace "client"                          namespace "server"
//!  xdp0  10.77.0.3 (kernel, for the TCP rows)  veth0  10.77.0.1
//!        10.77.0.2 (smoltcp, over AF_XDP)
//!        <=============== veth pair ===============>
//! ```
//!
//! Both ends have one queue each, so that every frame arrives on the queue
//! the XDP socket is bound to. [`VethPair`] is an RAII guard: dropping it
//! (also while a failing test unwinds) deletes both namespaces, which
//! deletes the veth pair, and with it any XDP program still attached. The
//! namespaces are named after the process id and a counter, so concurrent
//! tests and a stale pair from a killed run never collide.
//!
//! It runs `ip` (iproute2) as the setup tool and needs CAP_NET_ADMIN and
//! CAP_SYS_ADMIN (root); [`VethPair::create`] says so with
//! [`io::ErrorKind::PermissionDenied`] or [`io::ErrorKind::NotFound`] (no
//! `ip`), which the tests report as a skip.

use std::ffi::CString;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::prelude::rust_2024::*;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::{eprintln, format};

/// The server's address (kernel TCP, server namespace).
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// smoltcp's address on the client's veth end (answered by smoltcp's ARP).
pub const XDP_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);
/// The client namespace kernel's own address (for kernel-TCP comparisons).
pub const KERNEL_CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 3);
/// Prefix length of the test subnet.
pub const PREFIX: u8 = 24;
/// The client's end of the veth pair (inside the client namespace).
pub const CLIENT_IF: &str = "xdp0";
/// The server's end of the veth pair (inside the server namespace).
pub const SERVER_IF: &str = "veth0";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Two network namespaces joined by a veth pair; deleted on drop.
#[derive(Debug)]
pub struct VethPair {
    client: String,
    server: String,
}

/// Run `ip args...`, mapping failures to an error that says what failed.
fn ip(args: &[&str]) -> io::Result<()> {
    let out = Command::new("ip").args(args).output().map_err(|e| {
        io::Error::new(e.kind(), format!("cannot run `ip` (install iproute2): {e}"))
    })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let kind = if err.contains("Operation not permitted") || err.contains("Permission denied") {
        io::ErrorKind::PermissionDenied
    } else {
        io::ErrorKind::Other
    };
    Err(io::Error::new(
        kind,
        format!("ip {}: {err}", args.join(" ")),
    ))
}

/// Whether this process can build the environment: root, and `ip` runs.
/// The error says what is missing.
pub fn available() -> io::Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "network namespaces and XDP need root (CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_BPF)",
        ));
    }
    ip(&["-V"])
}

impl VethPair {
    /// Create both namespaces, the veth pair between them, the addresses, and
    /// bring everything up. On error, whatever was created is deleted again.
    pub fn create() -> io::Result<Self> {
        available()?;
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tag = format!("tw{}-{n}", std::process::id());
        let pair = VethPair {
            client: format!("{tag}-c"),
            server: format!("{tag}-s"),
        };
        // From here on, dropping `pair` on an error removes what exists.
        ip(&["netns", "add", &pair.client])?;
        ip(&["netns", "add", &pair.server])?;
        ip(&[
            "link",
            "add",
            CLIENT_IF,
            "numtxqueues",
            "1",
            "numrxqueues",
            "1",
            "netns",
            &pair.client,
            "type",
            "veth",
            "peer",
            "name",
            SERVER_IF,
            "numtxqueues",
            "1",
            "numrxqueues",
            "1",
            "netns",
            &pair.server,
        ])?;
        let c = &pair.client;
        let s = &pair.server;
        let kernel_client = format!("{KERNEL_CLIENT_ADDR}/{PREFIX}");
        let server = format!("{SERVER_ADDR}/{PREFIX}");
        ip(&["-n", c, "addr", "add", &kernel_client, "dev", CLIENT_IF])?;
        ip(&["-n", s, "addr", "add", &server, "dev", SERVER_IF])?;
        ip(&["-n", c, "link", "set", "lo", "up"])?;
        ip(&["-n", s, "link", "set", "lo", "up"])?;
        ip(&["-n", c, "link", "set", CLIENT_IF, "up"])?;
        ip(&["-n", s, "link", "set", SERVER_IF, "up"])?;
        // veth offloads checksums to "hardware" that never computes them: frames
        // would reach the XDP socket with only the pseudo-header sum filled in,
        // and smoltcp (rightly) drops them. A real NIC's frames carry full ones.
        in_netns(&pair.server, || super::sys::disable_tx_checksum(SERVER_IF))??;
        Ok(pair)
    }

    /// The client namespace's name.
    pub fn client_ns(&self) -> &str {
        &self.client
    }

    /// The server namespace's name.
    pub fn server_ns(&self) -> &str {
        &self.server
    }

    /// Run `f` on a new thread inside the client namespace and wait for it.
    /// Sockets (AF_XDP, TCP) opened there stay in that namespace wherever
    /// they are used afterwards.
    pub fn in_client<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        in_netns(&self.client, f)
    }

    /// Run `f` on a new thread inside the server namespace and wait for it.
    pub fn in_server<T: Send>(&self, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        in_netns(&self.server, f)
    }

    /// Start `f` on a thread inside the client namespace.
    pub fn spawn_client<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::thread::JoinHandle<io::Result<T>> {
        spawn_in(self.client.clone(), f)
    }

    /// Start `f` on a thread inside the server namespace.
    pub fn spawn_server<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::thread::JoinHandle<io::Result<T>> {
        spawn_in(self.server.clone(), f)
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth pair, and so the pair.
        for ns in [&self.client, &self.server] {
            if !std::path::Path::new("/run/netns").join(ns).exists() {
                // Never made (creation failed before it).
                continue;
            }
            if let Err(e) = ip(&["netns", "del", ns]) {
                // Nothing else to do from a destructor; say it so it can be cleaned by hand.
                eprintln!("tickwire-bypass: could not delete network namespace {ns}: {e}");
            }
        }
    }
}

/// Move the calling thread into the named namespace (`ip netns` keeps them
/// under /run/netns).
fn enter(ns: &str) -> io::Result<()> {
    let path = CString::new(format!("/run/netns/{ns}"))
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `path` is NUL-terminated; a non-negative result is a new fd we own.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by open(2).
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: setns(2) on a namespace fd; it changes only this thread's network namespace.
    if unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn in_netns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> io::Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            enter(ns)?;
            Ok(f())
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

fn spawn_in<T: Send + 'static>(
    ns: String,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<io::Result<T>> {
    std::thread::spawn(move || {
        enter(&ns)?;
        Ok(f())
    })
}
