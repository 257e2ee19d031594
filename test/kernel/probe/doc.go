// Command probe runs the real-kernel checks inside a test guest
// (test/kernel): each subcommand opens the umad device through the
// product's packages, does one thing against Linux's ib_umad, and prints
// one line "KT PASS <check> <detail>" or "KT FAIL <check> <detail>".
// It is a test program, built static and copied into the guest's
// initramfs by test/kernel/run.sh; no product binary depends on it.
//
// main.go holds the subcommands, one per check.
package main
