//! The XDP program that hands frames to the XDP sockets, built in-process.
//!
//! It is five eBPF instructions, the same as libxdp's default program:
//!
//! ```text
//! r2 = *(u32 *)(r1 + 16)          ; ctx->rx_queue_index
//! r1 = <XSKMAP fd>                ; 64-bit load, patched by the kernel to the map
//! r3 = XDP_PASS                   ; what to do when no socket sits at that index
//! call bpf_redirect_map           ; (map, queue, XDP_PASS)
//! exit                            ; return its verdict
//! ```
//!
//! Every frame that arrives on a queue whose XSKMAP slot holds a socket is
//! redirected into that socket's RX ring (ARP, TCP, anything: the user-space
//! stack owns the address); frames on other queues, or before a socket is
//! inserted, go on to the kernel's stack as usual.
//!
//! Why assembled here rather than compiled with clang and loaded with libbpf
//! or `ip link set ... xdp obj`: a fresh machine then needs no compiler, no
//! BPF object file and no library of a particular version; the `bpf(2)`
//! system call is all there is. The program is attached as a BPF *link*
//! (Linux 5.9+): it is detached by the kernel when its last file descriptor
//! closes, so a crashed or killed test leaves no program behind.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::prelude::rust_2024::*;

use super::sys;

/// `XDP_FLAGS_SKB_MODE`: generic XDP, in the stack after the driver built an skb.
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`: native XDP, in the driver's receive path.
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// Where the program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    /// Native (driver) mode if the driver has it, generic otherwise.
    Auto,
    /// Native XDP in the driver (needed for zero-copy sockets).
    Native,
    /// Generic XDP (any interface; frames are copied into the socket).
    Generic,
}

/// One eBPF instruction: opcode, dst/src registers, offset, immediate.
const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    // Little-endian layout of `struct bpf_insn` (x86_64, aarch64).
    (code as u64)
        | ((dst as u64 & 0xf) << 8)
        | ((src as u64 & 0xf) << 12)
        | ((off as u16 as u64) << 16)
        | ((imm as u32 as u64) << 32)
}

/// `BPF_LDX | BPF_MEM | BPF_W`.
const LDX_W: u8 = 0x61;
/// `BPF_LD | BPF_IMM | BPF_DW` (two slots).
const LD_IMM64: u8 = 0x18;
/// `BPF_ALU64 | BPF_MOV | BPF_K`.
const MOV64_IMM: u8 = 0xb7;
/// `BPF_JMP | BPF_CALL`.
const CALL: u8 = 0x85;
/// `BPF_JMP | BPF_EXIT`.
const EXIT: u8 = 0x95;
/// `BPF_PSEUDO_MAP_FD`: the 64-bit immediate is a map's fd.
const PSEUDO_MAP_FD: u8 = 1;
/// Helper `bpf_redirect_map`.
const REDIRECT_MAP: i32 = 51;
/// `offsetof(struct xdp_md, rx_queue_index)`.
const RX_QUEUE_INDEX: i16 = 16;
/// `XDP_PASS`.
const XDP_PASS: i32 = 2;

/// The program's instructions for the XSKMAP `map_fd`.
fn instructions(map_fd: i32) -> [u64; 6] {
    [
        insn(LDX_W, 2, 1, RX_QUEUE_INDEX, 0),
        insn(LD_IMM64, 1, PSEUDO_MAP_FD, 0, map_fd),
        insn(0, 0, 0, 0, 0),
        insn(MOV64_IMM, 3, 0, 0, XDP_PASS),
        insn(CALL, 0, 0, 0, REDIRECT_MAP),
        insn(EXIT, 0, 0, 0, 0),
    ]
}

/// The redirect program attached to one interface, with its XSKMAP. Dropping
/// it detaches the program.
#[derive(Debug)]
pub struct XdpProgram {
    link: OwnedFd,
    map: OwnedFd,
    _prog: OwnedFd,
    ifindex: u32,
    native: bool,
}

/// Slots of the XSKMAP: queue ids 0..64 can take a socket.
const MAP_ENTRIES: u32 = 64;

impl XdpProgram {
    /// Load the program and attach it to interface `ifname` (looked up in the
    /// calling thread's network namespace). Needs CAP_NET_ADMIN and CAP_BPF
    /// (or CAP_SYS_ADMIN). Fails if another XDP program is attached already.
    pub fn attach(ifname: &str, mode: Attach) -> io::Result<Self> {
        let ifindex = sys::ifindex(ifname)?;
        let map = sys::xskmap_create(MAP_ENTRIES)?;
        let prog = sys::prog_load_xdp(&instructions(map.as_raw_fd()), b"tw_xsk_redirect")?;
        let (link, native) = match mode {
            Attach::Native => (
                sys::xdp_link_create(&prog, ifindex, XDP_FLAGS_DRV_MODE)?,
                true,
            ),
            Attach::Generic => (
                sys::xdp_link_create(&prog, ifindex, XDP_FLAGS_SKB_MODE)?,
                false,
            ),
            Attach::Auto => match sys::xdp_link_create(&prog, ifindex, XDP_FLAGS_DRV_MODE) {
                Ok(l) => (l, true),
                Err(_) => (
                    sys::xdp_link_create(&prog, ifindex, XDP_FLAGS_SKB_MODE)?,
                    false,
                ),
            },
        };
        Ok(XdpProgram {
            link,
            map,
            _prog: prog,
            ifindex,
            native,
        })
    }

    /// Whether the program runs in the driver (native XDP) rather than generic XDP.
    pub fn is_native(&self) -> bool {
        self.native
    }

    /// The interface's index.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Send every frame arriving on `queue` to the socket `xsk` (an [`XdpDevice`](super::XdpDevice)'s fd).
    pub fn insert(&self, queue: u32, xsk: &impl AsRawFd) -> io::Result<()> {
        sys::map_update(&self.map, queue, xsk.as_raw_fd() as u32)
    }

    /// Let frames on `queue` go to the kernel's stack again.
    pub fn remove(&self, queue: u32) -> io::Result<()> {
        sys::map_delete(&self.map, queue)
    }

    /// The BPF link's descriptor (pin it to keep the program after this process exits).
    pub fn link_fd(&self) -> &OwnedFd {
        &self.link
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_encoding_matches_the_kernel_layout() {
        let p = instructions(7);
        // ldxw r2, [r1 + 16]: opcode 0x61, dst 2, src 1, off 16.
        assert_eq!(p[0], 0x0000_0000_0010_1261);
        // lddw r1, map fd 7: src = BPF_PSEUDO_MAP_FD.
        assert_eq!(p[1], 0x0000_0007_0000_1118);
        assert_eq!(p[2], 0);
        // mov r3, 2
        assert_eq!(p[3], 0x0000_0002_0000_03b7);
        // call 51
        assert_eq!(p[4], 0x0000_0033_0000_0085);
        assert_eq!(p[5], 0x95);
    }
}
