//go:build !linux

package store

func ancestors() []string { return nil }
