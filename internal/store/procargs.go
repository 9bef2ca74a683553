package store

import (
	"bytes"
	"encoding/binary"
)

// parseProcargs parses macOS's kern.procargs2: argc (int32), the executable
// path, NUL padding, then argc NUL-terminated arguments (then the
// environment, which is not read). It lives outside the darwin file so it is
// tested on every system.
func parseProcargs(b []byte) []string {
	if len(b) < 4 {
		return nil
	}
	argc := int(binary.NativeEndian.Uint32(b))
	b = b[4:]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil
	}
	b = b[i:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	argv := make([]string, 0, min(argc, 64))
	for len(argv) < argc && len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			argv = append(argv, string(b))
			break
		}
		argv = append(argv, string(b[:i]))
		b = b[i+1:]
	}
	return argv
}
