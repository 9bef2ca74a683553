package scan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/clients"
	"github.com/weir-sec/weir/internal/detect"
)

func srv(name, status string, tools ...ToolReport) ServerReport {
	r := ServerReport{Name: name, WeirName: name, Pointer: "/mcpServers/" + name, Transport: clients.TransportStdio, Status: status, Tools: tools}
	switch status {
	case StatusFailed:
		r.Error = "did not answer initialize within 2s; stopped"
	case StatusInvalid:
		r.Error = `the entry cannot be started as written: "args" is a string`
	case StatusSkipped:
		r.Transport, r.Error = clients.TransportHTTP, "a remote server; not contacted without --remote"
	}
	return r
}

func TestTrifectaKnown(t *testing.T) {
	private := ToolReport{Name: "read_note", Labels: []string{"private"}}
	disabled := srv("off", StatusSkipped)
	disabled.Disabled, disabled.Transport, disabled.Error = true, clients.TransportStdio, "disabled in the configuration; not started"
	builtin := srv("dev", StatusSkipped)
	builtin.Transport, builtin.Error = clients.TransportBuiltin, "provided by the client itself; nothing to launch"
	for _, c := range []struct {
		name    string
		reports []ServerReport
		known   bool
		summary string
	}{
		{"no servers", nil, true, "No lethal trifecta: no tool supplies private data or untrusted input or a way out (sink)."},
		{"only disabled and builtin", []ServerReport{disabled, builtin}, true, "No lethal trifecta: "},
		{"all scanned", []ServerReport{srv("notes", StatusScanned, private)}, true, "No lethal trifecta: no tool supplies untrusted input or a way out (sink)."},
		{"some scanned", []ServerReport{srv("notes", StatusScanned, private), srv("hang", StatusFailed)}, true,
			"No lethal trifecta: no tool supplies untrusted input or a way out (sink) (1 server not scanned, so not counted)."},
		// A scanned server without tools is known to supply nothing.
		{"scanned, no tools", []ServerReport{srv("empty", StatusScanned), srv("hang", StatusFailed)}, true, "No lethal trifecta"},

		{"one failed", []ServerReport{srv("hang", StatusFailed), disabled}, false,
			"Lethal trifecta unknown: hang, the only server the client starts, could not be scanned (failed), so nothing is known about what its tools can do."},
		{"one remote", []ServerReport{srv("docs", StatusSkipped)}, false,
			"Lethal trifecta unknown: docs, the only server the client starts, could not be scanned (remote, not contacted without --remote), so nothing is known about what its tools can do. Scan again with --remote to include remote servers."},
		{"none scanned", []ServerReport{srv("hang", StatusFailed), srv("crash", StatusFailed), srv("broken", StatusInvalid), srv("docs", StatusSkipped), builtin}, false,
			"Lethal trifecta unknown: none of the 4 servers the client starts could be scanned (failed: hang, crash; cannot be started as written: broken; remote, not contacted without --remote: docs), so nothing is known about what their tools can do. Scan again with --remote to include remote servers."},
	} {
		tri := AssessTrifecta(c.reports)
		if tri.Known != c.known || !strings.HasPrefix(tri.Summary, c.summary) {
			t.Errorf("%s: known %v, summary %q; want %v, %q", c.name, tri.Known, tri.Summary, c.known, c.summary)
		}
		if !tri.Known && (tri.Present || tri.Severity != "none" || strings.Contains(tri.Summary, "No lethal trifecta")) {
			t.Errorf("%s: an unknown verdict reads %+v", c.name, tri)
		}
	}
	if tri := unreadableTrifecta(); tri.Known || !strings.Contains(tri.Summary, "unknown: the file could not be read") {
		t.Errorf("unreadable: %+v", tri)
	}
}

// unknownReport is a scan where no server of one file could be scanned,
// next to a file that could not be read.
func unknownReport() Report {
	c := ConfigReport{Client: "cursor", ClientName: "Cursor", Scope: "user", Format: "mcpServers", Path: ".cursor/mcp.json",
		Servers: []ServerReport{srv("hang", StatusFailed), srv("docs", StatusSkipped)}}
	c.Servers[0].Line, c.Servers[1].Line = 3, 4
	c.Trifecta = AssessTrifecta(c.Servers)
	bad := Unreadable(clients.Location{Client: clients.ClaudeDesktop, Path: "claude_desktop_config.json", Scope: "user", Format: "mcpServers"},
		errors.New("claude_desktop_config.json:3:9: missing ':' after the key"))
	r := NewReport([]ConfigReport{c, bad})
	r.Finish("1.2.3", detect.High)
	return r
}

// TestUnknownTrifectaReported: when nothing is known, the text, JSON and
// SARIF reports say the trifecta is unknown and why, never that it is
// absent.
func TestUnknownTrifectaReported(t *testing.T) {
	rep := unknownReport()

	var text bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	want := `Cursor (user) .cursor/mcp.json
  hang  stdio · FAILED: did not answer initialize within 2s; stopped  (line 3)
  docs  http · skipped: a remote server; not contacted without --remote  (line 4)
  lethal trifecta: UNKNOWN, no server could be scanned
    Lethal trifecta unknown: none of the 2 servers the client starts could be scanned (failed: hang; remote, not contacted without --remote: docs), so nothing is known about what their tools can do. Scan again with --remote to include remote servers.

Claude Desktop (user) claude_desktop_config.json
  cannot read: claude_desktop_config.json:3:9: missing ':' after the key

2 config files, 2 servers (0 scanned, 1 could not be scanned, 1 skipped), 0 tools; findings: 0 high, 0 medium, 0 low
ERROR: a configuration file could not be read (exit 2)
`
	if text.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), want)
	}

	out, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		Configs []struct {
			Trifecta struct {
				Known, Present bool
				Severity       string
				Summary        string
			}
		}
	}
	if err := json.Unmarshal(out, &js); err != nil {
		t.Fatal(err)
	}
	for i, c := range js.Configs {
		if c.Trifecta.Known || c.Trifecta.Present || c.Trifecta.Severity != "none" || !strings.HasPrefix(c.Trifecta.Summary, "Lethal trifecta unknown: ") {
			t.Errorf("config %d: trifecta %+v", i, c.Trifecta)
		}
	}
	if !bytes.Contains(out, []byte(`"known": false`)) {
		t.Errorf("no \"known\": false in\n%s", out)
	}

	sarif, err := rep.SARIF("1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, sarif)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID, Kind, Level string
				Message             struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(sarif, &log); err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, r := range log.Runs[0].Results {
		if r.RuleID == RuleTrifecta {
			if r.Kind != "open" || r.Level != "none" {
				t.Errorf("trifecta result kind %q level %q, want open and none", r.Kind, r.Level)
			}
			open = append(open, r.Message.Text)
		}
	}
	if len(open) != 2 || !strings.Contains(open[0], "none of the 2 servers the client starts could be scanned") || !strings.Contains(open[1], "the file could not be read") {
		t.Errorf("trifecta results %q", open)
	}
}
