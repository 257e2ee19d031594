package e2e

import (
	"os"
	"syscall"
)

func syscallSIGHUP() os.Signal { return syscall.SIGHUP }
