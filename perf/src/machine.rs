//! What we run on: CPU model and clock from /proc/cpuinfo, the measured TSC
//! frequency, and pinning the current thread to a core.

use std::time::Duration;

use crate::clock;

/// A description of the machine for the report header.
#[derive(Debug, Clone)]
pub struct Machine {
    /// CPU model name, or "unknown".
    pub cpu_model: String,
    /// Logical CPUs the OS reports.
    pub logical_cpus: usize,
    /// "cpu MHz" of the first CPU in /proc/cpuinfo (the current clock, not the TSC's).
    pub cpu_mhz: Option<f64>,
    /// TSC ticks per second measured against the OS clock (1e9 for the ns fallback).
    pub ticks_per_sec: f64,
    /// CPU flags that matter here.
    pub flags: Vec<&'static str>,
}

impl Machine {
    /// Probe the machine; spends about 100 ms calibrating the TSC.
    pub fn probe() -> Self {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            info.lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let flag_line = field("flags").unwrap_or_default();
        let has = |f: &str| flag_line.split_whitespace().any(|x| x == f);
        let flags = [
            "constant_tsc",
            "nonstop_tsc",
            "tsc_known_freq",
            "rdtscp",
            "avx2",
        ]
        .into_iter()
        .filter(|f| has(f))
        .collect();
        Machine {
            cpu_model: field("model name").unwrap_or_else(|| "unknown".into()),
            logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_mhz: field("cpu MHz").and_then(|v| v.parse().ok()),
            ticks_per_sec: clock::calibrate(Duration::from_millis(100)),
            flags,
        }
    }

    /// Convert a number of readings to nanoseconds.
    pub fn to_ns(&self, ticks: f64) -> f64 {
        ticks * 1e9 / self.ticks_per_sec
    }
}

/// Whether the rdtscp instruction is there (always true off x86_64, where
/// the clock does not use it).
pub fn has_rdtscp() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // CPUID leaf 0x8000_0001, EDX bit 27 (RDTSCP).
        let max_ext = std::arch::x86_64::__cpuid(0x8000_0000).eax;
        max_ext >= 0x8000_0001 && std::arch::x86_64::__cpuid(0x8000_0001).edx & (1 << 27) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}

/// Core clock cycles per TSC tick, measured with a chain of dependent adds
/// (one cycle each) timed by the TSC: the TSC runs at a fixed rate, the core
/// at whatever turbo allows. `None` off x86_64.
pub fn core_cycles_per_tick() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        const ITERS: u64 = 2_000_000;
        let mut best = 0.0f64;
        for _ in 0..5 {
            let t0 = clock::start();
            // SAFETY: register-only arithmetic and a loop on a counter we own;
            // no memory is touched and both registers are declared clobbered.
            unsafe {
                std::arch::asm!(
                    "2:",
                    "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
                    "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
                    "dec {n}",
                    "jnz 2b",
                    x = inout(reg) 0u64 => _,
                    n = inout(reg) ITERS => _,
                    options(nomem, nostack),
                );
            }
            let ticks = clock::stop().wrapping_sub(t0);
            best = best.max((ITERS * 10) as f64 / ticks as f64);
        }
        Some(best)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Pin the current thread to logical core `id`; false if that failed.
pub fn pin(id: usize) -> bool {
    core_affinity::set_for_current(core_affinity::CoreId { id })
}

/// The load average over 1, 5 and 15 minutes (`/proc/loadavg`, Linux), as written
/// there; `None` elsewhere.
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    (fields.len() == 3).then(|| fields.join(" "))
}
