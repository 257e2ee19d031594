//go:build cgo && ibcref

package cumadref

/*
#cgo LDFLAGS: -libumad
#include <stdint.h>
long hdr_size(void);
long hdr_old_size(void);
long reg_size(void);
long reg2_size(void);
unsigned long ioc_reg(void);
unsigned long ioc_unreg(void);
unsigned long ioc_pkey(void);
unsigned long ioc_reg2(void);
void hdr_offsets(long *o);
void reg_offsets(long *o);
void reg2_offsets(long *o);
void fill(uint8_t *buf, int dlid, int dqp, int sl, int qkey, int grh, uint8_t *gid, int hop, int tclass,
          uint32_t flow, int gid_index, int pkey_index);
*/
import "C"

import "unsafe"

// Sizes of the kernel structures.
func HdrSize() int    { return int(C.hdr_size()) }
func HdrOldSize() int { return int(C.hdr_old_size()) }
func RegSize() int    { return int(C.reg_size()) }
func Reg2Size() int   { return int(C.reg2_size()) }

// Ioctl numbers.
func IoctlRegisterAgent() uint64   { return uint64(C.ioc_reg()) }
func IoctlUnregisterAgent() uint64 { return uint64(C.ioc_unreg()) }
func IoctlEnablePKey() uint64      { return uint64(C.ioc_pkey()) }
func IoctlRegisterAgent2() uint64  { return uint64(C.ioc_reg2()) }

func offsets(n int, f func(*C.long)) []int {
	o := make([]C.long, n)
	f(&o[0])
	out := make([]int, n)
	for i, v := range o {
		out[i] = int(v)
	}
	return out
}

// HdrOffsets: id status timeout_ms retries length qpn qkey lid sl path_bits
// grh_present gid_index hop_limit traffic_class gid flow_label pkey_index.
func HdrOffsets() []int { return offsets(17, func(p *C.long) { C.hdr_offsets(p) }) }

// RegOffsets: id method_mask qpn mgmt_class mgmt_class_version oui rmpp_version.
func RegOffsets() []int { return offsets(7, func(p *C.long) { C.reg_offsets(p) }) }

// Reg2Offsets: id qpn mgmt_class mgmt_class_version flags method_mask oui rmpp_version.
func Reg2Offsets() []int { return offsets(8, func(p *C.long) { C.reg2_offsets(p) }) }

// Fill returns the 64 header bytes libibumad's setters write for an address.
func Fill(dlid, dqp, sl, qkey int, grh bool, gid [16]byte, hop, tclass int, flow uint32, gidIndex, pkeyIndex int) []byte {
	buf := make([]byte, 64+256)
	g := 0
	if grh {
		g = 1
	}
	C.fill((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.int(dlid), C.int(dqp), C.int(sl), C.int(qkey), C.int(g),
		(*C.uint8_t)(unsafe.Pointer(&gid[0])), C.int(hop), C.int(tclass), C.uint32_t(flow), C.int(gidIndex), C.int(pkeyIndex))
	return buf[:64]
}
