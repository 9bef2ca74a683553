package clients

import "testing"

func TestConfigLines(t *testing.T) {
	loc := Location{Client: ClaudeCode, Path: "/home/u/.claude.json", Format: FormatClaudeCode}
	c, err := Parse(loc, []byte(`{
  "mcpServers": {
    "a": {"command": "x"},
    "b": {"url": "https://x.example"}
  },
  "projects": {
    "/home/u/p": {
      "mcpServers": {
        "a": {"command": "y"}
      }
    }
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Lines()
	want := map[string]int{"/mcpServers/a": 3, "/mcpServers/b": 4, "/projects/~1home~1u~1p/mcpServers/a": 9}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("line of %s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	y, err := Parse(Location{Path: "config.yaml", Format: FormatContinueYAML}, []byte("name: x\nmcpServers:\n  - name: one\n    command: a\n  - name: two\n    command: b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := y.Lines(); got["/mcpServers/0"] != 3 || got["/mcpServers/1"] != 5 {
		t.Errorf("yaml lines %v", got)
	}
}

func TestRunFlags(t *testing.T) {
	for _, c := range []struct {
		s            Server
		name, policy string
	}{
		{Server{Command: "npx", Args: []string{"run", "--name", "x"}}, "", ""}, // not wrapped
		{Server{Wrapped: true, Command: "weir", Args: []string{"run", "--", "npx"}}, "", ""},
		{Server{Wrapped: true, Command: "weir", Args: []string{"run", "--name", "mail", "--policy", "p.yaml", "--", "npx"}}, "mail", "p.yaml"},
		{Server{Wrapped: true, Command: "weir", Args: []string{"run", "--name=mail", "--policy=p.yaml", "npx", "--name", "inner"}}, "mail", "p.yaml"},
	} {
		if name, policy := c.s.RunFlags(); name != c.name || policy != c.policy {
			t.Errorf("RunFlags(%q) = %q, %q; want %q, %q", c.s.Args, name, policy, c.name, c.policy)
		}
	}
}
