package scan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weir-sec/weir/internal/detect"
)

// Exit statuses of weir scan, as Report.ExitCode holds them. When several
// apply, ExitUsage wins over ExitFindings, and ExitFindings over
// ExitUnreachable.
const (
	ExitOK          = 0 // nothing at or above --fail-on, every server started could be scanned
	ExitFindings    = 1 // a finding at or above --fail-on, the trifecta verdict included
	ExitUsage       = 2 // bad flags, or a configuration or policy file that cannot be read or parsed
	ExitUnreachable = 3 // some server could not be scanned (failed or invalid), and neither 1 nor 2 applies
)

// Report is a whole `weir scan`: every configuration file it read, and a
// summary. Its JSON encoding (Report.JSON) is the stable `--format json`
// output.
type Report struct {
	Configs []ConfigReport `json:"configs"`
	Summary Summary        `json:"summary"`

	// Set by Finish: Weir's version, the --fail-on threshold, and the
	// exit status the report leads to (one of the Exit constants).
	Weir     string `json:"weir_version,omitempty"`
	FailOn   string `json:"fail_on,omitempty"`
	ExitCode int    `json:"exit_code"`
}

// Summary counts what a Report holds.
type Summary struct {
	Configs      int `json:"configs"`       // files scanned
	ConfigErrors int `json:"config_errors"` // files that could not be read or parsed
	Servers      int `json:"servers"`
	Scanned      int `json:"scanned"` // servers by status
	Failed       int `json:"failed"`
	Invalid      int `json:"invalid"`
	Skipped      int `json:"skipped"`
	Tools        int `json:"tools"`
	// Findings counts detector findings by severity (low, medium, high),
	// the lethal-trifecta verdicts included.
	Findings map[string]int `json:"findings"`
	// Trifecta counts the files where the lethal trifecta is present, and
	// Unguarded those of them where some server supplying it does not run
	// behind Weir.
	Trifecta  int `json:"trifecta"`
	Unguarded int `json:"trifecta_unguarded"`
	// Highest is the highest severity found: none, low, medium or high.
	Highest string `json:"highest"`
}

// NewReport summarises the scans of some configuration files.
func NewReport(configs []ConfigReport) Report {
	s := Summary{Configs: len(configs), Findings: map[string]int{"low": 0, "medium": 0, "high": 0}}
	var highest detect.Severity
	note := func(sev string) {
		for _, x := range []detect.Severity{detect.Low, detect.Medium, detect.High} {
			if x.String() == sev {
				s.Findings[sev]++
				highest = max(highest, x)
			}
		}
	}
	for _, c := range configs {
		if c.Error != "" {
			s.ConfigErrors++
		}
		for _, r := range c.Servers {
			s.Servers++
			switch r.Status {
			case StatusScanned:
				s.Scanned++
			case StatusFailed:
				s.Failed++
			case StatusInvalid:
				s.Invalid++
			case StatusSkipped:
				s.Skipped++
			}
			s.Tools += len(r.Tools)
			for _, f := range r.Findings {
				note(f.Severity)
			}
			for _, t := range r.Tools {
				for _, f := range t.Findings {
					note(f.Severity)
				}
			}
		}
		if c.Trifecta.Present {
			s.Trifecta++
			if len(c.Trifecta.Unguarded) > 0 {
				s.Unguarded++
			}
			note(c.Trifecta.Severity)
		}
	}
	s.Highest = highest.String()
	if configs == nil {
		configs = []ConfigReport{}
	}
	return Report{Configs: configs, Summary: s}
}

// Finish sets what the caller decides: Weir's version, the --fail-on
// threshold, and the exit status the report leads to with it.
func (r *Report) Finish(version string, failOn detect.Severity) {
	code := ExitOK
	if r.Summary.Failed+r.Summary.Invalid > 0 {
		code = ExitUnreachable
	}
	if highest, _ := ParseSeverity(r.Summary.Highest); highest >= failOn {
		code = ExitFindings
	}
	if r.Summary.ConfigErrors > 0 {
		code = ExitUsage
	}
	r.Weir, r.FailOn, r.ExitCode = version, failOn.String(), code
}

// ParseSeverity reads none, low, medium or high.
func ParseSeverity(s string) (detect.Severity, bool) {
	for _, x := range []detect.Severity{detect.None, detect.Low, detect.Medium, detect.High} {
		if x.String() == s {
			return x, true
		}
	}
	return detect.None, false
}

// String says what the summary counts in one line, for people: "1 config
// file, 8 servers (4 scanned, 3 could not be scanned, 1 skipped), 5 tools;
// findings: 7 high, 0 medium, 0 low; lethal trifecta in 1 file (1 not
// behind Weir)".
func (s Summary) String() string {
	parts := []string{fmt.Sprintf("%d scanned", s.Scanned)}
	if s.Failed+s.Invalid > 0 {
		parts = append(parts, fmt.Sprintf("%d could not be scanned", s.Failed+s.Invalid))
	}
	if s.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", s.Skipped))
	}
	line := fmt.Sprintf("%s, %s (%s), %s; findings: %d high, %d medium, %d low",
		count(s.Configs, "config file"), count(s.Servers, "server"), strings.Join(parts, ", "), count(s.Tools, "tool"),
		s.Findings["high"], s.Findings["medium"], s.Findings["low"])
	if s.Trifecta > 0 {
		line += fmt.Sprintf("; lethal trifecta in %s", count(s.Trifecta, "file"))
		if s.Unguarded > 0 {
			line += fmt.Sprintf(" (%d not behind Weir)", s.Unguarded)
		}
	}
	return line
}

// JSON encodes the report with every object's keys sorted and two-space
// indentation, HTML characters left as they are: the same report always
// encodes to the same bytes.
func (r Report) JSON() ([]byte, error) {
	return stableJSON(r)
}

// stableJSON encodes v with sorted object keys (by decoding the struct
// encoding into maps, which encoding/json writes sorted).
func stableJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(generic); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
