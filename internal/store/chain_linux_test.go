package store

import "os"

// ancestors names this process's ancestors from its parent up, as the walk
// sees them, so a test can check which launchers really stood between a
// helper and its client.
func ancestors() []string {
	var names []string
	pid := os.Getppid()
	for range maxWalk {
		p, err := readProc(pid)
		if err != nil || pid <= 1 {
			break
		}
		names = append(names, baseName(p.name))
		if !isLauncher(p) {
			break
		}
		pid = p.ppid
	}
	return names
}
