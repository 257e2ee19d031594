package simwire

// struct sim_ctl: magic, clientid, type and len (u32, host byte order:
// little endian everywhere ibsim runs here), then data[64].
const (
	CtlSize     = 80
	CtlDataOff  = 16
	CtlDataSize = 64
	Magic       = 0xdeadbeef
)

// struct sim_request: dlid, slid, dqp, sqp, status (u32 each), 4 bytes of
// padding, length (u64), mad[256].
const (
	RequestSize   = 288
	RequestLenOff = 24
	RequestMADOff = 32
)

// struct sim_client_info, a CONNECT's data: id, qp, issm (u32), nodeid[32].
const (
	ClientInfoSize = 44
	InfoNodeOff    = 12
	InfoNodeSize   = 32
)

// MaxClients is how many clients ibsim serves at once; ETimedOut is the
// status (ETIMEDOUT) ibsim gives a request nobody handles.
const (
	MaxClients = 10
	ETimedOut  = 110
)

// Control message types (enum SIM_CTL_TYPES).
const (
	CtlError = iota
	CtlConnect
	CtlDisconnect
	CtlGetPort
	CtlGetVendor
	CtlGetGID
	CtlGetGUID
	CtlGetNodeInfo
	CtlGetPortInfo
	CtlSetISSM
	CtlGetPKeys
)
