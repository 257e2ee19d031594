// Package ibopen holds the transport flags that the exporter and the
// ibtracer command share (--ib.transport, --ib.ca, --ib.port,
// --ibsim.node, --sim.*) and opens the transport they select: the
// kernel's umad device, ibsim's socket, or an in-process simulated
// fabric with its agents.
//
//	var c ibopen.Config
//	ibopen.AddFlags(app, &c, false)
//	ibopen.AddSimFlags(app, &c)
//	kingpin.MustParse(app.Parse(os.Args[1:]))
//	o, err := c.Open(true) // true: the port also takes requests (hosts an agent)
//	if err != nil {
//		return err // names the device and what to do
//	}
//	defer o.Close()
package ibopen
