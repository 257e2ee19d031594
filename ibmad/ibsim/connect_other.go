//go:build !unix

package ibsim

import (
	"errors"
	"syscall"
)

// connectFD fails: ibsim's clients connect Unix datagram sockets.
func connectFD(uintptr, syscall.Sockaddr) error {
	return errors.New("ibsim: the ibsim transport needs a Unix system")
}
