package ibmad

import "time"

// What every kind of request (Do, GetTable) does per attempt.

// attempts is req's timeout per attempt and retries after the first, the
// engine's defaults where req leaves them 0 (negative retries: none).
func (e *Engine) attempts(req *Request) (time.Duration, int) {
	timeout, retries := req.Timeout, req.Retries
	if timeout <= 0 {
		timeout = e.opts.Timeout
	}
	if retries == 0 {
		retries = e.opts.Retries
	} else if retries < 0 {
		retries = 0
	}
	return timeout, retries
}

// mapAttempt gives one attempt of c a fresh TID and maps it to c; earlier
// attempts stay mapped, so a late answer to any of them still counts.
func (e *Engine) mapAttempt(c *call) (uint32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return 0, ErrClosed
	}
	tid := e.nextTID()
	e.pending[tid] = c
	c.tids = append(c.tids, tid)
	c.current = tid
	return tid, nil
}
