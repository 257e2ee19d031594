package ibmad

// SetBeforePortLock makes f run in Engine.Port between the unlocked look
// at the cached port and taking the port lock, and returns a func that
// restores the default. Set it before starting the engines it is meant for
// and restore it after closing them.
func SetBeforePortLock(f func()) (restore func()) {
	old := beforePortLock
	beforePortLock = f
	return func() { beforePortLock = old }
}
