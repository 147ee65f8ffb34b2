//! smoltcp on Ethernet over an [`XdpDevice`]: the crate's [`EthLink`] (the
//! interface, ARP, IPv4, client and server TCP sockets) on an AF_XDP socket.

use std::io;

use super::XdpDevice;
use crate::eth::{EthDevice, EthLink};

/// A smoltcp interface on an AF_XDP socket, with its sockets.
pub type XdpLink<'s, 'u> = EthLink<'s, XdpDevice<'u>>;

impl EthDevice for XdpDevice<'_> {
    fn mac(&self) -> [u8; 6] {
        XdpDevice::mac(self)
    }

    /// Publish the TX ring and kick the kernel (one `sendto` in copy mode).
    fn commit(&mut self) -> io::Result<()> {
        XdpDevice::commit(self)
    }
}
