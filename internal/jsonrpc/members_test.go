package jsonrpc

import "testing"

func TestMemberAndReplaceAt(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","method":"m","params":{"_meta":{"k":1,"j":"x"},"a":[1]}}`)
	if got := string(Member(msg, "method")); got != `"m"` {
		t.Errorf("Member(method) = %s", got)
	}
	if Member(msg, "nope") != nil || Member([]byte(`[1]`), "a") != nil {
		t.Error("Member found what is not there")
	}
	out, ok := ReplaceAt(msg, []byte(`"y"`), "params", "_meta", "j")
	if !ok || string(out) != `{"jsonrpc":"2.0","method":"m","params":{"_meta":{"k":1,"j":"y"},"a":[1]}}` {
		t.Errorf("ReplaceAt = %s, %v", out, ok)
	}
	if out, ok := ReplaceAt(msg, []byte(`1`), "params", "missing", "j"); ok || string(out) != string(msg) {
		t.Errorf("ReplaceAt on a missing path = %s, %v", out, ok)
	}
}
