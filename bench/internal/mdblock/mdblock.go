// Package mdblock rewrites a generated block of a Markdown file: the text
// between a start and an end marker, so that measured numbers are written
// by the program that measured them and never by hand.
package mdblock

import (
	"fmt"
	"os"
	"strings"
)

// Replace puts body between the lines start and end of the file at path.
func Replace(path, start, end, body string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(data)
	i, j := strings.Index(s, start), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q section", path, start, end)
	}
	s = s[:i+len(start)] + "\n" + strings.TrimRight(body, "\n") + "\n" + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

// Pct formats a share as a percentage with one decimal.
func Pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
