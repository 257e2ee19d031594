//go:build cgo && ibcref

// libibumad's header setters, for the cross-check tests.
#include <string.h>
#include <stdint.h>
#include <endian.h>
#include <infiniband/umad.h>

// fill runs libibumad's setters on a 64-byte user MAD header.
void fill(uint8_t *buf, int dlid, int dqp, int sl, int qkey, int grh, uint8_t *gid, int hop, int tclass,
                 uint32_t flow, int gid_index, int pkey_index) {
	memset(buf, 0, 64);
	umad_set_addr(buf, dlid, dqp, sl, qkey);
	if (grh) {
		struct ib_mad_addr a;
		memset(&a, 0, sizeof(a));
		memcpy(a.gid, gid, 16);
		a.hop_limit = hop;
		a.traffic_class = tclass;
		a.flow_label = (__typeof__(a.flow_label))flow; // umad_set_grh takes host order
		a.gid_index = gid_index;
		umad_set_grh(buf, &a);
	}
	umad_set_pkey(buf, pkey_index);
}
