package clients

import (
	"strings"
	"testing"
)

// TestApplyCheckedIsolates checks that edits which would break the file
// for one entry are refused for that entry alone, and that the error names
// fields, never values.
func TestApplyCheckedIsolates(t *testing.T) {
	src := `{"mcpServers": {"a": {"command": "x", "env": {"TOKEN": "s3cret"}}, "b": {"command": "y"}}}`
	loc := Location{Client: Unknown, Path: "c.json", Format: FormatMCPServers}
	c, err := Parse(loc, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	expect := append([]Server(nil), c.Servers...)
	expect[0].Command, expect[1].Command = "weir", "z"
	a, b := c.entries[0].cmd.val, c.entries[1].cmd.val
	pend := []pending{
		{0, []edit{{a.start, a.end, `"weir", "env": {}`}}}, // a duplicate key: the file no longer reads
		{1, []edit{{b.start, b.end, `"z"`}}},
	}
	changes := []Change{{Server: "a", Action: ActionWrapped}, {Server: "b", Action: ActionWrapped}}
	out, err := c.applyChecked(pend, expect, changes)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(src, `"y"`, `"z"`, 1); string(out) != want {
		t.Errorf("out = %s, want %s", out, want)
	}
	if changes[0].Action != ActionRefused || !strings.Contains(changes[0].Detail, "could not rewrite this entry safely") || changes[1].Action != ActionWrapped {
		t.Errorf("changes = %+v", changes)
	}
	// A rewrite that reads differently is reported by field name only.
	_, err = c.apply([]edit{{a.start, a.end, `"other"`}}, c.Servers)
	if err == nil || !strings.Contains(err.Error(), "(Command)") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("apply = %v", err)
	}
}
