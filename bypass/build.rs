//! Build script of tickwire-bypass. With feature `dpdk` (Linux) it compiles
//! `csrc/dpdk_shim.c` against the system's DPDK, found through pkg-config
//! (`libdpdk`; Debian: `apt-get install dpdk-dev libdpdk-dev pkg-config`), and
//! links the DPDK libraries. Without the feature it does nothing at all.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "dpdk")]
    dpdk::build();
}

#[cfg(feature = "dpdk")]
mod dpdk {
    pub fn build() {
        println!("cargo:rerun-if-changed=csrc/dpdk_shim.c");
        println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
        if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
            // The module is Linux-only (cfg'd out elsewhere): nothing to build.
            return;
        }
        let lib = match pkg_config::Config::new()
            .atleast_version("21.11")
            .probe("libdpdk")
        {
            Ok(lib) => lib,
            Err(e) => panic!(
                "feature `dpdk` needs DPDK (21.11 or newer) found by pkg-config as `libdpdk`; \
                 on Debian/Ubuntu: apt-get install dpdk-dev libdpdk-dev pkg-config \
                 (or set PKG_CONFIG_PATH to your DPDK build's lib/pkgconfig): {e}"
            ),
        };
        let mut cc = cc::Build::new();
        cc.file("csrc/dpdk_shim.c")
            // rte_ipv4_udptcp_cksum_verify is marked experimental in 22.11.
            .define("ALLOW_EXPERIMENTAL_API", None)
            .warnings(true)
            .flag_if_supported("-Wno-unused-parameter");
        for p in &lib.include_paths {
            cc.include(p);
        }
        // pkg-config's other cflags: `-include rte_config.h`, `-march=...`.
        if let Ok(out) = std::process::Command::new("pkg-config")
            .args(["--cflags-only-other", "libdpdk"])
            .output()
        {
            let flags = String::from_utf8_lossy(&out.stdout).into_owned();
            let mut it = flags.split_whitespace();
            while let Some(f) = it.next() {
                if f == "-include" {
                    if let Some(h) = it.next() {
                        cc.flag("-include").flag(h);
                    }
                } else {
                    cc.flag(f);
                }
            }
        }
        cc.compile("tickwire_dpdk_shim");
        // rte_eth_from_rings (the in-process cable) is net_ring's: the driver is a plugin
        // in the shared build, so link it by name.
        println!("cargo:rustc-link-lib=rte_net_ring");
    }
}
