package main

import (
	"net/http"
	"testing"
)

// --header-env carries a variable's value exactly: nothing in it expands.
func TestHeadersFromEnv(t *testing.T) {
	env := map[string]string{"TOK": "Bearer p$ss ${OTHER} $$", "OTHER": "no"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	h := http.Header{}
	if err := headersFromEnv(h, []string{"Authorization=TOK", "x-api-key = TOK"}, getenv); err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Authorization"); got != env["TOK"] {
		t.Errorf("Authorization = %q, want %q", got, env["TOK"])
	}
	if got := h.Get("X-Api-Key"); got != env["TOK"] {
		t.Errorf("X-Api-Key = %q", got)
	}
	for _, bad := range []string{"Authorization", "=TOK", "Authorization=", "Bad Name=TOK", "Authorization=MISSING", "Accept=TOK"} {
		if err := headersFromEnv(http.Header{}, []string{bad}, getenv); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
