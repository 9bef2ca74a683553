package clients

import (
	"bytes"
	"encoding/json"

	"github.com/weir-sec/weir/internal/detect"
)

// Report is a whole `weir scan`: every configuration file it read, and a
// summary. Its JSON encoding (Report.JSON) is the stable `--format json`
// output.
type Report struct {
	Configs []ConfigReport `json:"configs"`
	Summary Summary        `json:"summary"`

	// Set by the caller (weir scan): Weir's version, the --fail-on
	// threshold, and the exit status the report leads to.
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
