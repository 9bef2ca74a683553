package deptest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a TB that keeps what Check reports.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.errs = append(r.errs, "fatal: "+fmt.Sprintf(format, a...))
}

// TestCheckFinds: the check is not vacuous: the transport package starts
// processes, so banning os/exec there fails, transitively too (through
// cmd/weir), and a ban on a package tree catches packages under it.
func TestCheckFinds(t *testing.T) {
	for _, tt := range []struct {
		dir, bad, want string
	}{
		{"../transport", "os/exec", "depends on os/exec"},
		{"../../cmd/weir", "os/exec", "depends on os/exec"},
		{"../../cmd/weir", "github.com/weir-sec/weir/internal/policy/...", "internal/policy/policyfile"},
	} {
		var r recorder
		Check(&r, tt.dir, map[string]string{tt.bad: "banned"})
		if len(r.errs) == 0 || !strings.Contains(strings.Join(r.errs, "\n"), tt.want) {
			t.Errorf("Check(%s, %s) reported %q; want it to mention %q", tt.dir, tt.bad, r.errs, tt.want)
		}
	}
	var r recorder
	Check(&r, "../flow", map[string]string{"os/exec": "banned"})
	if len(r.errs) != 0 {
		t.Errorf("flow does not use os/exec, yet Check reported %q", r.errs)
	}
}
