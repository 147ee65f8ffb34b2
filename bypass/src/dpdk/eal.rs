//! DPDK's Environment Abstraction Layer: the options a program passes, the
//! one-per-process initialisation, the clean-up when the last user is gone,
//! and the errors of every set-up step.

use core::ffi::{CStr, c_char, c_int};
use std::ffi::CString;
use std::prelude::rust_2024::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::{format, vec};

use super::sys;

/// The EAL's command line, as fields. [`EalConfig::virtual_devices`] is the
/// set that runs without hugepages or a NIC (tests, CI, a laptop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EalConfig {
    /// `--lcores`: the logical cores EAL may use, e.g. `"2"` (the poll loop
    /// pinned to CPU 2), `"2,3"`, or `"0@(0-1)"` (lcore 0 floating over CPUs 0
    /// and 1). The thread calling [`Dpdk::init`] becomes the main lcore (the
    /// first one unless [`main_lcore`](Self::main_lcore) says otherwise) and
    /// is pinned to its CPUs.
    pub lcores: String,
    /// `--main-lcore`.
    pub main_lcore: Option<u32>,
    /// `--no-huge`: memory from ordinary pages (no hugepages needed; IOVA as
    /// VA; physical NICs that DMA need hugepages or an IOMMU).
    pub no_huge: bool,
    /// `-m`: megabytes of memory to reserve (needed with `--no-huge`).
    pub memory_mb: Option<u32>,
    /// `--no-pci`: do not scan the PCI bus (virtual devices only).
    pub no_pci: bool,
    /// `--vdev` each: virtual devices, e.g. `"net_af_packet0,iface=eth1"`,
    /// `"net_memif0,role=client,socket=/run/memif.sock"`, `"net_ring0"`.
    pub vdevs: Vec<String>,
    /// `-a` each: PCI devices to use (others are left alone), e.g. `"0000:3b:00.0"`.
    pub pci_allow: Vec<String>,
    /// `--file-prefix`: the name of this process's runtime files; two DPDK
    /// processes on one machine need different ones.
    pub file_prefix: Option<String>,
    /// `--no-shconf`: no shared configuration (no secondary processes).
    pub no_shconf: bool,
    /// `--log-level`, e.g. `"error"` or `"pmd.net.memif:debug"`.
    pub log_level: Option<String>,
    /// Anything else, passed as is after the options above.
    pub extra: Vec<String>,
}

impl EalConfig {
    /// No hugepages, no PCI scan, no shared configuration, no telemetry
    /// socket, `memory_mb` of ordinary memory, a file prefix of its own
    /// (`tickwire-<pid>`), errors only in the log, on `lcores`; add `vdevs`.
    pub fn virtual_devices(lcores: &str, memory_mb: u32) -> Self {
        EalConfig {
            lcores: lcores.into(),
            main_lcore: None,
            no_huge: true,
            memory_mb: Some(memory_mb),
            no_pci: true,
            vdevs: Vec::new(),
            pci_allow: Vec::new(),
            file_prefix: Some(format!("tickwire-{}", std::process::id())),
            no_shconf: true,
            log_level: Some("error".into()),
            extra: vec!["--no-telemetry".into()],
        }
    }

    /// Add a virtual device (`--vdev`).
    pub fn vdev(mut self, spec: impl Into<String>) -> Self {
        self.vdevs.push(spec.into());
        self
    }

    /// The argument vector handed to `rte_eal_init` (program name first).
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![
            "tickwire".to_string(),
            "--lcores".into(),
            self.lcores.clone(),
        ];
        if let Some(m) = self.main_lcore {
            a.extend(["--main-lcore".into(), m.to_string()]);
        }
        if self.no_huge {
            a.push("--no-huge".into());
        }
        if let Some(m) = self.memory_mb {
            a.extend(["-m".into(), m.to_string()]);
        }
        if self.no_pci {
            a.push("--no-pci".into());
        }
        for v in &self.vdevs {
            a.push(format!("--vdev={v}"));
        }
        for p in &self.pci_allow {
            a.extend(["-a".into(), p.clone()]);
        }
        if let Some(p) = &self.file_prefix {
            a.push(format!("--file-prefix={p}"));
        }
        if self.no_shconf {
            a.push("--no-shconf".into());
        }
        if let Some(l) = &self.log_level {
            a.push(format!("--log-level={l}"));
        }
        a.extend(self.extra.iter().cloned());
        a
    }
}

/// What went wrong while setting DPDK up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DpdkError {
    /// `rte_eal_init` already ran in this process (it runs once per process,
    /// even after clean-up): share the first [`Dpdk`] (it is `Clone`).
    AlreadyInitialized,
    /// `rte_eal_init` failed.
    Eal {
        /// The arguments it was given.
        args: String,
        /// DPDK's error number.
        code: i32,
    },
    /// A setting cannot work.
    Invalid(String),
    /// No port of that name or index (or not exactly one, when none was named).
    NoSuchPort {
        /// What was asked for.
        wanted: String,
        /// The ports EAL found.
        found: Vec<String>,
    },
    /// A set-up step of a port (mempool, configure, queues, start) failed.
    Port {
        /// The port's name.
        port: String,
        /// The step.
        step: &'static str,
        /// DPDK's error number.
        code: i32,
    },
}

/// DPDK's text for an error number.
pub(super) fn strerror(code: i32) -> String {
    // SAFETY: rte_strerror returns a pointer to a NUL-terminated string, static
    // or in a per-lcore buffer, valid until the next call on this thread.
    let s = unsafe { CStr::from_ptr(sys::tw_dpdk_strerror(code)) };
    s.to_string_lossy().into_owned()
}

impl core::fmt::Display for DpdkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DpdkError::AlreadyInitialized => f.write_str(
                "rte_eal_init already ran in this process (it runs once per process, even \
                 after a failure or rte_eal_cleanup): clone the first `Dpdk` instead of \
                 calling `Dpdk::init` again",
            ),
            DpdkError::Eal { args, code } => write!(
                f,
                "rte_eal_init({args}) failed: {} (errno {code}); without hugepages pass \
                 --no-huge with -m (EalConfig::virtual_devices), and give each DPDK process \
                 its own --file-prefix",
                strerror(*code)
            ),
            DpdkError::Invalid(what) => write!(f, "invalid DPDK setting: {what}"),
            DpdkError::NoSuchPort { wanted, found } => write!(
                f,
                "no DPDK port {wanted} (EAL found {}); add it with --vdev or -a in EalConfig",
                if found.is_empty() {
                    "none".to_string()
                } else {
                    found.join(", ")
                }
            ),
            DpdkError::Port { port, step, code } => write!(
                f,
                "DPDK port {port}: {step} failed: {} (errno {code})",
                strerror(*code)
            ),
        }
    }
}

impl core::error::Error for DpdkError {}

static INITIALISED: AtomicBool = AtomicBool::new(false);

/// The EAL, initialised; `rte_eal_cleanup` runs when the last clone (and the
/// last device opened through it) is dropped.
#[derive(Debug)]
struct EalGuard {
    args: Vec<String>,
    /// EAL's runtime directory (`/var/run/dpdk/<file prefix>`).
    runtime_dir: String,
}

impl Drop for EalGuard {
    fn drop(&mut self) {
        // SAFETY: EAL was initialised by `Dpdk::init` and every port and pool
        // holds a clone of the guard, so none is left in use.
        unsafe { sys::tw_dpdk_eal_cleanup() };
        // EAL leaves its runtime directory behind, empty with --no-shconf: one
        // per file prefix would pile up. Only an empty one is removed.
        let _ = std::fs::remove_dir(&self.runtime_dir);
    }
}

/// DPDK, initialised in this process. Clone it to share it; ports opened
/// through it keep it alive.
#[derive(Debug, Clone)]
pub struct Dpdk(Arc<EalGuard>);

impl Dpdk {
    /// Run `rte_eal_init` with `cfg`'s options: this thread becomes the main
    /// lcore (pinned to its CPUs); virtual devices are created and ports
    /// probed. Once per process: a second call returns
    /// [`DpdkError::AlreadyInitialized`].
    ///
    /// ```no_run
    /// use tickwire_bypass::dpdk::{Dpdk, EalConfig, PortConfig};
    /// let eal = EalConfig::virtual_devices("0", 256).vdev("net_af_packet0,iface=eth1");
    /// let dpdk = Dpdk::init(&eal)?;
    /// let device = dpdk.open(&PortConfig::named("net_af_packet0"))?;
    /// # Ok::<(), tickwire_bypass::dpdk::DpdkError>(())
    /// ```
    pub fn init(cfg: &EalConfig) -> Result<Dpdk, DpdkError> {
        let args = cfg.args();
        let owned = args
            .iter()
            .map(|a| CString::new(a.as_str()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| DpdkError::Invalid("an EAL argument contains a NUL byte".into()))?;
        if INITIALISED.swap(true, Ordering::SeqCst) {
            return Err(DpdkError::AlreadyInitialized);
        }
        // EAL may permute argv: hand it a copy of the pointers, keep the strings.
        let mut argv: Vec<*mut c_char> = owned.iter().map(|s| s.as_ptr().cast_mut()).collect();
        let argc = argv.len() as c_int;
        // SAFETY: argv holds `argc` pointers to NUL-terminated strings that live
        // (in `owned`) until after the call; EAL reads them and may reorder the
        // pointer array, which is ours. Once per process (checked above).
        let rc = unsafe { sys::tw_dpdk_eal_init(argc, argv.as_mut_ptr()) };
        if rc < 0 {
            // SAFETY: reads DPDK's per-thread error number.
            let code = unsafe { sys::tw_dpdk_errno() };
            return Err(DpdkError::Eal {
                args: args[1..].join(" "),
                code,
            });
        }
        // SAFETY: EAL is initialised; the string is EAL's, NUL-terminated, and
        // copied at once.
        let runtime_dir = unsafe { CStr::from_ptr(sys::tw_dpdk_runtime_dir()) }
            .to_string_lossy()
            .into_owned();
        Ok(Dpdk(Arc::new(EalGuard { args, runtime_dir })))
    }

    /// The arguments EAL was initialised with.
    pub fn args(&self) -> &[String] {
        &self.0.args
    }

    /// The ports EAL probed, by index and name.
    pub fn ports(&self) -> Vec<(u16, String)> {
        // RTE_MAX_ETHPORTS is a build setting (32 in Debian's): ask about more.
        (0..1024u16)
            // SAFETY: any port number may be asked about.
            .filter(|&p| unsafe { sys::tw_dpdk_port_valid(p) } != 0)
            .map(|p| (p, port_name(p)))
            .collect()
    }

    /// Give the calling thread (one EAL did not start) an lcore id of its own,
    /// so that mempool caches serve it; its CPU affinity stays as it is (pin
    /// it yourself). Returns the id; a thread that has one keeps it.
    pub fn register_thread(&self) -> Result<u32, DpdkError> {
        if let Some(id) = Self::lcore_id() {
            return Ok(id);
        }
        // SAFETY: registers the calling thread with EAL, which is initialised.
        if unsafe { sys::tw_dpdk_thread_register() } != 0 {
            return Err(DpdkError::Port {
                port: "(thread)".into(),
                step: "rte_thread_register",
                // SAFETY: reads DPDK's per-thread error number.
                code: unsafe { sys::tw_dpdk_errno() },
            });
        }
        Self::lcore_id().ok_or(DpdkError::Invalid(
            "rte_thread_register gave no lcore id".into(),
        ))
    }

    /// The lcore id of the calling thread (`None` outside EAL's threads: the
    /// mempools' per-lcore caches are then bypassed, which is slower).
    pub fn lcore_id() -> Option<u32> {
        // SAFETY: reads a per-thread variable.
        let id = unsafe { sys::tw_dpdk_lcore_id() };
        (id != u32::MAX).then_some(id)
    }
}

/// A port's name (its vdev name or PCI address).
pub(super) fn port_name(port: u16) -> String {
    let mut buf = [0 as c_char; 64];
    // SAFETY: `buf` has room for `len` bytes; the C side writes a NUL-terminated name.
    let rc = unsafe { sys::tw_dpdk_port_name(port, buf.as_mut_ptr(), buf.len()) };
    if rc != 0 {
        return format!("port {port}");
    }
    // SAFETY: NUL-terminated by snprintf above.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}
