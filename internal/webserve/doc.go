// Package webserve holds the exporter's HTTP server and its limits
// (docs/architecture.md, "HTTP server limits"): the server's timeouts
// and their flags (Limits, AddFlags, NewServer), the connections open at
// once (LimitConns, ConnLimiter: at the limit, the connection that has
// waited longest for a request is closed to admit a new one), the
// requests rendering at once (LimitInFlight: a request gives its slot up
// while it writes to its client), and the memory of the answers waiting
// on slow clients (SendBudget: past it, the oldest is cut off).
//
// A server with every limit:
//
//	lim, conns := webserve.LimitConns(limits.MaxConns, logger) // conns: its metrics
//	budget := webserve.NewSendBudget(webserve.DefaultSendBudget, logger)
//	mux.Handle("/metrics", webserve.LimitInFlight(4, render(budget)))
//	srv := webserve.NewServer(mux, limits, logger)
//	srv.ConnState = lim.ConnState
//	srv.Serve(lim.Listen(ln))
//
// where render renders an answer into memory, calls Yield to give its
// slot up, and sends it between budget.Begin and the function Begin
// returns.
package webserve
