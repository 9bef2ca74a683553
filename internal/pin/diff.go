package pin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Diff describes, field by field, how the pending definition of a pin
// differs from the approved one, as unified-style line diffs a person can
// read. old is nil for a tool never approved (everything is new).
func Diff(old, pending []byte) (string, error) {
	var a, b Definition
	if len(old) > 0 {
		if err := json.Unmarshal(old, &a); err != nil {
			return "", fmt.Errorf("approved definition: %w", err)
		}
	}
	if err := json.Unmarshal(pending, &b); err != nil {
		return "", fmt.Errorf("pending definition: %w", err)
	}
	var out strings.Builder
	field := func(name, x, y string) {
		if x == y {
			return
		}
		fmt.Fprintf(&out, "%s:\n", name)
		for _, l := range lineDiff(strings.Split(x, "\n"), strings.Split(y, "\n")) {
			out.WriteString("  " + l + "\n")
		}
	}
	field("name", a.Name, b.Name)
	field("title", a.Title, b.Title)
	field("description", a.Description, b.Description)
	field("inputSchema", pretty(a.InputSchema), pretty(b.InputSchema))
	field("outputSchema", pretty(a.OutputSchema), pretty(b.OutputSchema))
	field("annotations", pretty(a.Annotations), pretty(b.Annotations))
	field("instructions (the server's)", a.Instructions, b.Instructions)
	if out.Len() == 0 {
		return "no difference in what the model sees\n", nil
	}
	return out.String(), nil
}

func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// maxDiffLines bounds the quadratic line diff; longer texts are shown
// whole, removed then added.
const maxDiffLines = 2000

// lineDiff returns the lines of a and b marked "- ", "+ " or "  " by a
// longest-common-subsequence alignment. Text that was empty is not shown
// as an empty removed line.
func lineDiff(a, b []string) []string {
	if len(a) == 1 && a[0] == "" {
		a = nil
	}
	if len(b) == 1 && b[0] == "" {
		b = nil
	}
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		var out []string
		for _, l := range a {
			out = append(out, "- "+l)
		}
		for _, l := range b {
			out = append(out, "+ "+l)
		}
		return out
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, "  "+a[i])
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, "- "+a[i])
	}
	for ; j < len(b); j++ {
		out = append(out, "+ "+b[j])
	}
	return out
}
