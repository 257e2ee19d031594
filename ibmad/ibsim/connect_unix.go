//go:build unix

package ibsim

import "syscall"

// connectFD connects a datagram socket to ibsim's per-client address.
func connectFD(fd uintptr, sa syscall.Sockaddr) error { return syscall.Connect(int(fd), sa) }
