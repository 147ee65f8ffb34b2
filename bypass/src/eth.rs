//! smoltcp on Ethernet over a real device (AF_XDP, DPDK): the interface (the
//! device's MAC address, an IPv4 address, ARP, an optional default gateway)
//! and TCP sockets, connecting to servers on other machines (or, in the
//! tests, in another network namespace or another DPDK process) or
//! listening for them.
//!
//! Same rules as [`Link`](crate::Link): the socket slots and TCP buffers are
//! the caller's, the clock is the caller's `now`, the seed is the caller's.

use std::io;
use std::prelude::rust_2024::*;

use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet, SocketStorage};
use smoltcp::phy::Device;
use smoltcp::socket::tcp;
use smoltcp::time::{Duration, Instant};
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpCidr, Ipv4Address, Ipv4Cidr};

use crate::link::{LinkError, TcpBuffers, settle};

/// An Ethernet device smoltcp runs on: its address, and the step that hands
/// what smoltcp queued to the hardware (one per turn of the loop).
pub trait EthDevice: Device {
    /// The Ethernet address smoltcp answers ARP with.
    fn mac(&self) -> [u8; 6];
    /// Send what was queued during the last `Interface::poll`.
    fn commit(&mut self) -> io::Result<()>;
}

/// A smoltcp interface on an Ethernet device, with its sockets.
pub struct EthLink<'s, D> {
    /// The smoltcp interface (Ethernet, the device's MAC address).
    pub iface: Interface,
    /// The device.
    pub device: D,
    /// The sockets.
    pub sockets: SocketSet<'s>,
    capacity: usize,
}

impl<'s, D: EthDevice> EthLink<'s, D> {
    /// Bring up smoltcp on `device` with address `addr` (its prefix says which
    /// hosts are reached directly, by ARP) and, for the rest, `gateway`.
    /// `slots` bounds the number of sockets; `seed` feeds smoltcp's generator
    /// (initial sequence numbers, ephemeral ports): use a different one per run.
    pub fn new(
        mut device: D,
        slots: &'s mut [SocketStorage<'s>],
        addr: Ipv4Cidr,
        gateway: Option<Ipv4Address>,
        seed: u64,
        now: Instant,
    ) -> Self {
        let mac = EthernetAddress(device.mac());
        let mut config = Config::new(HardwareAddress::Ethernet(mac));
        config.random_seed = seed;
        let mut iface = Interface::new(config, &mut device, now);
        iface.update_ip_addrs(|addrs| {
            // The list has room for at least one address and starts empty.
            let _ = addrs.push(IpCidr::Ipv4(addr));
        });
        if let Some(gw) = gateway {
            // The route table has room for at least one route and starts empty.
            let _ = iface.routes_mut().add_default_ipv4_route(gw);
        }
        let capacity = slots.len();
        EthLink {
            iface,
            device,
            sockets: SocketSet::new(slots),
            capacity,
        }
    }

    /// A TCP socket over `bufs`, Nagle's algorithm and delayed ACKs off (each
    /// message goes out as soon as it is written), if a slot is free.
    fn socket_in(&self, bufs: TcpBuffers<'s>) -> Result<tcp::Socket<'s>, LinkError> {
        // `SocketSet::add` panics when a borrowed slot list is full: check first.
        if self.sockets.iter().count() >= self.capacity {
            return Err(LinkError::NoSocketSlot);
        }
        let mut s = tcp::Socket::new(
            tcp::SocketBuffer::new(bufs.rx),
            tcp::SocketBuffer::new(bufs.tx),
        );
        s.set_nagle_enabled(false);
        s.set_ack_delay(None);
        Ok(s)
    }

    /// A TCP socket over `bufs` connecting from `local_port` to `remote`.
    pub fn connect(
        &mut self,
        bufs: TcpBuffers<'s>,
        remote: (Ipv4Address, u16),
        local_port: u16,
    ) -> Result<SocketHandle, LinkError> {
        let mut s = self.socket_in(bufs)?;
        s.connect(self.iface.context(), remote, local_port)
            .map_err(LinkError::Connect)?;
        Ok(self.sockets.add(s))
    }

    /// A TCP socket over `bufs` listening on `port` (it becomes the accepted
    /// connection when a client connects).
    pub fn listen(&mut self, bufs: TcpBuffers<'s>, port: u16) -> Result<SocketHandle, LinkError> {
        let mut s = self.socket_in(bufs)?;
        s.listen(port).map_err(LinkError::Listen)?;
        Ok(self.sockets.add(s))
    }

    /// The socket `h`.
    pub fn socket(&mut self, h: SocketHandle) -> &mut tcp::Socket<'s> {
        self.sockets.get_mut::<tcp::Socket>(h)
    }

    /// Let smoltcp move packets until a pass sends nothing (bounded; packets
    /// arriving meanwhile are the next poll's), then hand what it sent to the device ([`EthDevice::commit`]). Returns
    /// whether any socket's state may have changed.
    pub fn poll(&mut self, now: Instant) -> io::Result<bool> {
        let changed = settle(&mut self.iface, &mut self.device, &mut self.sockets, now);
        self.device.commit()?;
        Ok(changed)
    }

    /// How long until smoltcp wants to be polled for a timer (None: no timer).
    pub fn poll_delay(&mut self, now: Instant) -> Option<Duration> {
        self.iface.poll_delay(now, &self.sockets)
    }
}

impl<D: core::fmt::Debug> core::fmt::Debug for EthLink<'_, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EthLink")
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}
