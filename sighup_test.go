package main

import (
	"os"
	"syscall"
)

func syscallSIGHUP() os.Signal { return syscall.SIGHUP }
