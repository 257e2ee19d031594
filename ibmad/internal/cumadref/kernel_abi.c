//go:build cgo && ibcref

// Layouts from the kernel header, for the cross-check tests.
#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include <rdma/ib_user_mad.h>

long hdr_size(void)      { return sizeof(struct ib_user_mad_hdr); }
long hdr_old_size(void)  { return sizeof(struct ib_user_mad_hdr_old); }
long reg_size(void)      { return sizeof(struct ib_user_mad_reg_req); }
long reg2_size(void)     { return sizeof(struct ib_user_mad_reg_req2); }
unsigned long ioc_reg(void)    { return IB_USER_MAD_REGISTER_AGENT; }
unsigned long ioc_unreg(void)  { return IB_USER_MAD_UNREGISTER_AGENT; }
unsigned long ioc_pkey(void)   { return IB_USER_MAD_ENABLE_PKEY; }
unsigned long ioc_reg2(void)   { return IB_USER_MAD_REGISTER_AGENT2; }

#define OFF(s, f) (long)offsetof(struct s, f)
void hdr_offsets(long *o) {
	o[0] = OFF(ib_user_mad_hdr, id); o[1] = OFF(ib_user_mad_hdr, status); o[2] = OFF(ib_user_mad_hdr, timeout_ms);
	o[3] = OFF(ib_user_mad_hdr, retries); o[4] = OFF(ib_user_mad_hdr, length); o[5] = OFF(ib_user_mad_hdr, qpn);
	o[6] = OFF(ib_user_mad_hdr, qkey); o[7] = OFF(ib_user_mad_hdr, lid); o[8] = OFF(ib_user_mad_hdr, sl);
	o[9] = OFF(ib_user_mad_hdr, path_bits); o[10] = OFF(ib_user_mad_hdr, grh_present); o[11] = OFF(ib_user_mad_hdr, gid_index);
	o[12] = OFF(ib_user_mad_hdr, hop_limit); o[13] = OFF(ib_user_mad_hdr, traffic_class); o[14] = OFF(ib_user_mad_hdr, gid);
	o[15] = OFF(ib_user_mad_hdr, flow_label); o[16] = OFF(ib_user_mad_hdr, pkey_index);
}
void reg_offsets(long *o) {
	o[0] = OFF(ib_user_mad_reg_req, id); o[1] = OFF(ib_user_mad_reg_req, method_mask); o[2] = OFF(ib_user_mad_reg_req, qpn);
	o[3] = OFF(ib_user_mad_reg_req, mgmt_class); o[4] = OFF(ib_user_mad_reg_req, mgmt_class_version);
	o[5] = OFF(ib_user_mad_reg_req, oui); o[6] = OFF(ib_user_mad_reg_req, rmpp_version);
}
void reg2_offsets(long *o) {
	o[0] = OFF(ib_user_mad_reg_req2, id); o[1] = OFF(ib_user_mad_reg_req2, qpn); o[2] = OFF(ib_user_mad_reg_req2, mgmt_class);
	o[3] = OFF(ib_user_mad_reg_req2, mgmt_class_version); o[4] = OFF(ib_user_mad_reg_req2, flags);
	o[5] = OFF(ib_user_mad_reg_req2, method_mask); o[6] = OFF(ib_user_mad_reg_req2, oui); o[7] = OFF(ib_user_mad_reg_req2, rmpp_version);
}
