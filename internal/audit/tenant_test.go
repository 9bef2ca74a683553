package audit

import "testing"

func TestTenant(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"env:build":          "",
		"env:a/b":            "",
		"pid:12:34":          "",
		"http:Zx9":           "",
		"acme/env:build":     "acme",
		"acme/http:Zx9":      "acme",
		"team.a_b-1/env:x/y": "team.a_b-1",
		"/env:x":             "",
	} {
		if got := Tenant(in); got != want {
			t.Errorf("Tenant(%q) = %q, want %q", in, got, want)
		}
	}
}
