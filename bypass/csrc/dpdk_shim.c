/*
 * tickwire-bypass: the few DPDK calls the `dpdk` feature needs, as plain
 * functions Rust can link to.
 *
 * DPDK's fast path (rte_eth_rx_burst, rte_eth_tx_burst, rte_pktmbuf_alloc,
 * rte_pktmbuf_free, the mbuf data accessors, the checksum helpers) is made of
 * `static inline` functions in its headers: there is no symbol to call from
 * Rust. Each wrapper below calls exactly one of them (or a short fixed
 * sequence of them) and is compiled by the crate's build script against the
 * system's DPDK (pkg-config `libdpdk`), so the code that runs is DPDK's own.
 * The set-up calls (EAL, mempool, port and queues) live here too, so that
 * the Rust side never has to mirror DPDK's large configuration structs.
 *
 * Every function returns 0 (or a value) on success and a negative errno
 * value (DPDK's convention) on failure, unless its comment says otherwise.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_tcp.h>

/* What the port reported and what was switched on (see tw_dpdk_port_start). */
struct tw_dpdk_port_info {
	uint8_t mac[6];
	uint16_t mtu;
	uint16_t rx_desc;
	uint16_t tx_desc;
	int32_t socket;
	/* Offloads the port offers (RTE_ETH_{RX,TX}_OFFLOAD_*). */
	uint64_t rx_offload_capa;
	uint64_t tx_offload_capa;
	/* Offloads configured (the checksum ones the port offers, if asked). */
	uint64_t rx_offloads;
	uint64_t tx_offloads;
	char driver[64];
};

/* The offload bits the Rust side reads back (stable values, checked here). */
uint64_t tw_dpdk_offload_bit(int which)
{
	switch (which) {
	case 0: return RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
	case 1: return RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
	case 2: return RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	case 3: return RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	default: return 0;
	}
}

int tw_dpdk_errno(void)
{
	return rte_errno;
}

const char *tw_dpdk_strerror(int err)
{
	return rte_strerror(err);
}

/* rte_eal_init: the number of arguments parsed, or -1 with rte_errno set. */
int tw_dpdk_eal_init(int argc, char **argv)
{
	return rte_eal_init(argc, argv);
}

/* The directory EAL keeps this process's runtime files in. */
const char *tw_dpdk_runtime_dir(void)
{
	return rte_eal_get_runtime_dir();
}

int tw_dpdk_eal_cleanup(void)
{
	return rte_eal_cleanup();
}

/* The calling thread's lcore id (UINT32_MAX outside an EAL thread). */
unsigned tw_dpdk_lcore_id(void)
{
	return rte_lcore_id();
}

/* Give the calling (non-EAL) thread an lcore id, so that mempool caches
 * serve it; its CPU affinity is left as it is. */
int tw_dpdk_thread_register(void)
{
	return rte_thread_register();
}

int tw_dpdk_port_by_name(const char *name, uint16_t *port)
{
	return rte_eth_dev_get_port_by_name(name, port);
}

int tw_dpdk_port_name(uint16_t port, char *name, size_t len)
{
	char buf[RTE_ETH_NAME_MAX_LEN];
	int rc = rte_eth_dev_get_name_by_port(port, buf);
	if (rc != 0)
		return rc;
	snprintf(name, len, "%s", buf);
	return 0;
}

int tw_dpdk_port_valid(uint16_t port)
{
	return rte_eth_dev_is_valid_port(port);
}

/* A packet-mbuf pool: NULL with rte_errno set on failure. */
struct rte_mempool *tw_dpdk_pool_create(const char *name, unsigned n, unsigned cache,
					uint16_t data_room, int socket)
{
	return rte_pktmbuf_pool_create(name, n, cache, 0, data_room, socket);
}

void tw_dpdk_pool_free(struct rte_mempool *mp)
{
	rte_mempool_free(mp);
}

unsigned tw_dpdk_pool_avail(const struct rte_mempool *mp)
{
	return rte_mempool_avail_count(mp);
}

/*
 * Configure `port` with one RX and one TX queue of (at least) the given
 * sizes, RX buffers from `mp`, the checksum offloads it offers switched on
 * when `checksum_offload` is set, and start it. `info` is filled in.
 */
int tw_dpdk_port_start(uint16_t port, uint16_t rx_desc, uint16_t tx_desc, struct rte_mempool *mp,
		       int checksum_offload, struct tw_dpdk_port_info *info)
{
	struct rte_eth_dev_info dev;
	struct rte_eth_conf conf;
	struct rte_ether_addr mac;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = rte_eth_dev_info_get(port, &dev);
	if (rc != 0)
		return rc;
	info->rx_offload_capa = dev.rx_offload_capa;
	info->tx_offload_capa = dev.tx_offload_capa;
	snprintf(info->driver, sizeof(info->driver), "%s", dev.driver_name ? dev.driver_name : "");

	memset(&conf, 0, sizeof(conf));
	if (checksum_offload) {
		conf.rxmode.offloads = dev.rx_offload_capa &
			(RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM);
		conf.txmode.offloads = dev.tx_offload_capa &
			(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM);
	}
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rx_desc, &tx_desc);
	if (rc != 0)
		return rc;
	int socket = rte_eth_dev_socket_id(port);
	if (socket < 0)
		socket = (int)rte_socket_id();
	rc = rte_eth_rx_queue_setup(port, 0, rx_desc, (unsigned)socket, NULL, mp);
	if (rc != 0)
		return rc;
	rc = rte_eth_tx_queue_setup(port, 0, tx_desc, (unsigned)socket, NULL);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_start(port);
	if (rc != 0)
		return rc;
	/* Not every virtual device filters by address; those that do must let
	 * the stack's own address through. Failure here is not fatal. */
	(void)rte_eth_promiscuous_enable(port);

	rc = rte_eth_macaddr_get(port, &mac);
	if (rc != 0)
		return rc;
	memcpy(info->mac, mac.addr_bytes, 6);
	uint16_t mtu = 0;
	if (rte_eth_dev_get_mtu(port, &mtu) != 0 || mtu == 0)
		mtu = RTE_ETHER_MTU;
	info->mtu = mtu;
	info->rx_desc = rx_desc;
	info->tx_desc = tx_desc;
	info->socket = socket;
	info->rx_offloads = conf.rxmode.offloads;
	info->tx_offloads = conf.txmode.offloads;
	return 0;
}

/* Stop and close the port (the driver frees its queues). */
int tw_dpdk_port_close(uint16_t port)
{
	int rc = rte_eth_dev_stop(port);
	int rc2 = rte_eth_dev_close(port);
	return rc != 0 ? rc : rc2;
}

/* 1: link up, 0: down, negative: error. */
int tw_dpdk_link_up(uint16_t port)
{
	struct rte_eth_link link;
	int rc = rte_eth_link_get_nowait(port, &link);
	if (rc != 0)
		return rc;
	return link.link_status == RTE_ETH_LINK_UP;
}

/* Packets the port counted as missed or failed (for a test's diagnostics). */
int tw_dpdk_port_stats(uint16_t port, uint64_t out[6])
{
	struct rte_eth_stats st;
	int rc = rte_eth_stats_get(port, &st);
	if (rc != 0)
		return rc;
	out[0] = st.ipackets;
	out[1] = st.opackets;
	out[2] = st.imissed;
	out[3] = st.ierrors;
	out[4] = st.oerrors;
	out[5] = st.rx_nombuf;
	return 0;
}

/*
 * An in-process cable: two ports over two rte_rings, A's TX ring being B's
 * RX ring and the other way round (net_ring's rte_eth_from_rings). No
 * kernel, no shared memory between processes. The ports are named
 * `name_a`, `name_b`; the rings `name_a`.r / `name_b`.r.
 */
int tw_dpdk_ring_pair(const char *name_a, const char *name_b, unsigned ring_size,
		      uint16_t *port_a, uint16_t *port_b)
{
	char ra[RTE_RING_NAMESIZE], rb[RTE_RING_NAMESIZE];
	struct rte_ring *a_to_b, *b_to_a;
	int socket = (int)rte_socket_id();
	int a, b;

	snprintf(ra, sizeof(ra), "%s.r", name_a);
	snprintf(rb, sizeof(rb), "%s.r", name_b);
	a_to_b = rte_ring_create(ra, ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (a_to_b == NULL)
		return -rte_errno;
	b_to_a = rte_ring_create(rb, ring_size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (b_to_a == NULL) {
		int e = rte_errno;
		rte_ring_free(a_to_b);
		return -e;
	}
	a = rte_eth_from_rings(name_a, &b_to_a, 1, &a_to_b, 1, (unsigned)socket);
	if (a < 0)
		goto fail;
	b = rte_eth_from_rings(name_b, &a_to_b, 1, &b_to_a, 1, (unsigned)socket);
	if (b < 0) {
		rte_eth_dev_close((uint16_t)a);
		goto fail;
	}
	*port_a = (uint16_t)a;
	*port_b = (uint16_t)b;
	return 0;
fail:
	rte_ring_free(a_to_b);
	rte_ring_free(b_to_a);
	return -(rte_errno ? rte_errno : ENODEV);
}

/* Free the rings of a closed pair (by the port names given above). */
void tw_dpdk_ring_pair_free(const char *name_a, const char *name_b)
{
	char r[RTE_RING_NAMESIZE];
	snprintf(r, sizeof(r), "%s.r", name_a);
	rte_ring_free(rte_ring_lookup(r));
	snprintf(r, sizeof(r), "%s.r", name_b);
	rte_ring_free(rte_ring_lookup(r));
}

/* Create a virtual device after EAL init (hot-plug), e.g. name
 * "net_af_packet1", args "iface=eth1"; its port probes at once. */
int tw_dpdk_vdev_add(const char *name, const char *args)
{
	return rte_eal_hotplug_add("vdev", name, args);
}

int tw_dpdk_vdev_remove(const char *name)
{
	return rte_eal_hotplug_remove("vdev", name);
}

/* ---- the fast path: one inline DPDK function each ---- */

uint16_t tw_dpdk_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(port, queue, pkts, n);
}

uint16_t tw_dpdk_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(port, queue, pkts, n);
}

struct rte_mbuf *tw_dpdk_mbuf_alloc(struct rte_mempool *mp)
{
	return rte_pktmbuf_alloc(mp);
}

void tw_dpdk_mbuf_free(struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
}

void tw_dpdk_mbuf_free_bulk(struct rte_mbuf **pkts, unsigned n)
{
	rte_pktmbuf_free_bulk(pkts, n);
}

/*
 * A received packet's bytes, in place: NULL when it is spread over several
 * segments (never with the MTU the port was given; the caller drops it).
 */
const uint8_t *tw_dpdk_rx_data(const struct rte_mbuf *m, uint16_t *len)
{
	if (m->nb_segs != 1)
		return NULL;
	*len = rte_pktmbuf_data_len(m);
	return rte_pktmbuf_mtod(m, const uint8_t *);
}

/*
 * With RX checksum offload on: 1 when the IPv4 and TCP checksums of the
 * packet are known good (the port said so, or DPDK's software check passed
 * where the port did not know), 0 when either is bad. Packets other than
 * IPv4 pass (ARP has no checksum; smoltcp drops what it does not handle).
 */
int tw_dpdk_rx_checksum_ok(const struct rte_mbuf *m)
{
	uint64_t ip = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	const struct rte_ether_hdr *eth;
	const struct rte_ipv4_hdr *ih;
	uint16_t len = rte_pktmbuf_data_len(m);

	if (ip == RTE_MBUF_F_RX_IP_CKSUM_BAD || l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return 0;
	if (ip == RTE_MBUF_F_RX_IP_CKSUM_GOOD && l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return 1;
	/* The port did not know (or checked only one of them): DPDK's own
	 * software checks, on what the headers say is there. */
	if (len < sizeof(*eth) + sizeof(*ih))
		return 1;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return 1;
	ih = (const struct rte_ipv4_hdr *)(eth + 1);
	uint16_t ihl = rte_ipv4_hdr_len(ih);
	uint16_t total = rte_be_to_cpu_16(ih->total_length);
	if (ihl < sizeof(*ih) || sizeof(*eth) + (size_t)total > len || total < ihl)
		return 0;
	if (ip != RTE_MBUF_F_RX_IP_CKSUM_GOOD && rte_ipv4_cksum(ih) != 0)
		return 0;
	if (ih->next_proto_id == IPPROTO_TCP && l4 != RTE_MBUF_F_RX_L4_CKSUM_GOOD) {
		if (total < ihl + sizeof(struct rte_tcp_hdr))
			return 0;
		if (rte_ipv4_udptcp_cksum_verify(ih, (const uint8_t *)ih + ihl) != 0)
			return 0;
	}
	return 1;
}

/* Room for `len` bytes of packet data in a fresh mbuf (NULL: no room). */
uint8_t *tw_dpdk_tx_data(struct rte_mbuf *m, uint16_t len)
{
	return (uint8_t *)rte_pktmbuf_append(m, len);
}

/*
 * Ask the port for the checksums `tx_offloads` (the configured TX offloads)
 * covers, on a packet smoltcp built with those checksum fields left at zero:
 * set l2/l3 lengths and the mbuf's TX flags, and (for TCP) put the pseudo-
 * header sum in the TCP checksum field, as DPDK's drivers expect.
 * Non-IPv4 packets (ARP) are left alone.
 */
void tw_dpdk_tx_checksum_offload(struct rte_mbuf *m, uint64_t tx_offloads)
{
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ih;
	uint16_t len = rte_pktmbuf_data_len(m);

	if (len < sizeof(*eth) + sizeof(*ih))
		return;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return;
	ih = (struct rte_ipv4_hdr *)(eth + 1);
	uint16_t ihl = rte_ipv4_hdr_len(ih);
	m->l2_len = sizeof(*eth);
	m->l3_len = ihl;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4;
	if (tx_offloads & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		ih->hdr_checksum = 0;
		m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
	}
	if ((tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) && ih->next_proto_id == IPPROTO_TCP &&
	    len >= sizeof(*eth) + ihl + sizeof(struct rte_tcp_hdr)) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)ih + ihl);
		m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
		th->cksum = rte_ipv4_phdr_cksum(ih, m->ol_flags);
	}
}

/*
 * For the test of the offload path (no virtual device offers checksum
 * offload): finish in software what a NIC does with the flags and fields
 * tw_dpdk_tx_checksum_offload set, with DPDK's helpers.
 */
void tw_dpdk_tx_checksum_finish(struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ih =
		(struct rte_ipv4_hdr *)(rte_pktmbuf_mtod(m, uint8_t *) + m->l2_len);
	if (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) {
		ih->hdr_checksum = 0;
		ih->hdr_checksum = rte_ipv4_cksum(ih);
	}
	if (m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM) {
		/* As the hardware does: the one's-complement sum of the segment,
		 * starting from the pseudo-header sum left in the checksum field. */
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)ih + m->l3_len);
		uint16_t l4_len = (uint16_t)(rte_be_to_cpu_16(ih->total_length) - m->l3_len);
		th->cksum = (uint16_t)~rte_raw_cksum(th, l4_len);
	}
	m->ol_flags &= ~(RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_IPV4);
}
