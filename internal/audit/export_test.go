package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exportMasks hide what changes from run to run: the times Append stamps
// (as RFC 3339 and as OCSF's epoch milliseconds) and the hashes that cover
// them.
var exportMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "TIME"},
	{regexp.MustCompile(`"time":\d+`), `"time":"EPOCH_MS"`},
	{regexp.MustCompile(`[0-9a-f]{64}`), "HASH"},
}

func maskExport(b []byte) []byte {
	for _, m := range exportMasks {
		b = m.re.ReplaceAll(b, []byte(m.with))
	}
	return b
}

// TestExportGolden exports the sample log, stamped with the current time,
// in both formats, and compares them, times and hashes masked, with
// testdata/export.*.golden. Run with -update to rewrite them after a
// reviewed change to the mapping.
func TestExportGolden(t *testing.T) {
	path := writeSample(t, nil)
	for _, format := range []string{FormatJSONL, FormatOCSF} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			n, err := Export(&b, []string{path}, ExportOptions{Format: format, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if n != 16 || bytes.Count(b.Bytes(), []byte("\n")) != 16 {
				t.Fatalf("exported %d records in %d lines, want 16", n, bytes.Count(b.Bytes(), []byte("\n")))
			}
			got := maskExport(b.Bytes())
			golden := filepath.Join("testdata", "export."+format+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("line %d differs from %s (rerun with -update after review):\ngot  %s\nwant %s", i+1, golden, gl[i], wl[i])
					}
				}
				t.Fatalf("%s: %d lines, want %d", golden, len(gl), len(wl))
			}
		})
	}
}

// TestExportJSONLIsTheLog: the JSONL export is the log's lines byte for
// byte, so exported records still verify.
func TestExportJSONLIsTheLog(t *testing.T) {
	path := writeSample(t, sampleTime)
	var b bytes.Buffer
	if _, err := Export(&b, []string{path}, ExportOptions{Format: FormatJSONL}); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(path)
	if !bytes.Equal(b.Bytes(), log) {
		t.Fatal("the JSONL export differs from the log")
	}
	if sum, err := Verify(&b); err != nil || sum.Records != 16 {
		t.Fatalf("Verify(export) = %+v, %v", sum, err)
	}

	b.Reset()
	n, err := Export(&b, []string{path}, ExportOptions{Format: FormatJSONL, Since: sampleTime(7)})
	if err != nil || n != 9 {
		t.Fatalf("since record 8: %d records, %v", n, err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte(`{"seq":8,`)) {
		t.Errorf("the export since record 8 starts %.20s", b.Bytes())
	}
}

// TestOCSFEvents checks every exported event against what OCSF 1.8.0
// requires of its class, and the verdict mappings.
func TestOCSFEvents(t *testing.T) {
	path := writeSample(t, sampleTime)
	var b bytes.Buffer
	if _, err := Export(&b, []string{path}, ExportOptions{Format: FormatOCSF, Version: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	recs := sampleRecords(sampleTime)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d events for %d records", len(lines), len(recs))
	}
	for i, line := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
		num := func(k string) int {
			f, _ := ev[k].(float64)
			return int(f)
		}
		obj := func(m map[string]any, k string) map[string]any {
			o, _ := m[k].(map[string]any)
			return o
		}
		class, activity := num("class_uid"), num("activity_id")
		if num("type_uid") != class*100+activity || activity == 0 {
			t.Errorf("event %d: type_uid %d for class %d activity %d", i+1, num("type_uid"), class, activity)
		}
		if int64(num("time")) != sampleTime(i).UnixMilli() {
			t.Errorf("event %d: time %d, want %d", i+1, num("time"), sampleTime(i).UnixMilli())
		}
		md := obj(ev, "metadata")
		if md["version"] != OCSFVersion || obj(md, "product")["name"] != "Weir" || obj(md, "product")["version"] != "1.2.3" || int(md["sequence"].(float64)) != i+1 {
			t.Errorf("event %d: metadata %v", i+1, md)
		}
		if num("severity_id") < 1 || ev["severity"] == "" || ev["action"] == nil || ev["disposition"] == nil {
			t.Errorf("event %d: severity, action or disposition missing: %s", i+1, line)
		}
		r := recs[i]
		switch class {
		case 6003:
			if num("category_uid") != 6 || obj(obj(ev, "actor"), "session")["uid"] != r.Session || obj(ev, "api")["operation"] != r.Method || obj(ev, "src_endpoint") == nil {
				t.Errorf("event %d: API Activity without actor, api or src_endpoint: %s", i+1, line)
			}
			if r.Verdict != "allow" {
				t.Errorf("event %d: a %s record as API Activity", i+1, r.Verdict)
			}
		case 2004:
			fi := obj(ev, "finding_info")
			if num("category_uid") != 2 || fi["uid"] == "" || fi["title"] == "" || obj(fi, "analytic")["type_id"] == nil || ev["evidences"] == nil {
				t.Errorf("event %d: Detection Finding without finding_info or evidences: %s", i+1, line)
			}
			if r.Verdict == "allow" {
				t.Errorf("event %d: an allowed record as a finding", i+1)
			}
		default:
			t.Errorf("event %d: class %d", i+1, class)
		}
		if u := obj(ev, "unmapped"); u["hash"] != nil && len(u["hash"].(string)) != 64 || u["verdict"] != r.Verdict {
			t.Errorf("event %d: unmapped %v", i+1, u)
		}
	}
	// The mappings a SIEM rule would key on.
	for _, c := range []struct {
		i                  int
		severity, action   int
		disposition, class int
	}{
		{2, 1, 1, 1, 6003},   // allowed call
		{6, 4, 2, 2, 2004},   // blocked exfiltration
		{10, 2, 4, 11, 2004}, // redacted result
		{11, 3, 4, 14, 2004}, // escalated, held
		{12, 3, 1, 8, 2004},  // approved
		{13, 2, 1, 19, 2004}, // warned
		{14, 4, 3, 15, 2004}, // blocked in monitor mode: detected only
		{15, 3, 2, 25, 2004}, // declined
	} {
		var ev OCSFEvent
		json.Unmarshal([]byte(lines[c.i]), &ev)
		if ev.SeverityID != c.severity || ev.ActionID != c.action || ev.DispositionID != c.disposition || ev.ClassUID != c.class {
			t.Errorf("record %d (%s %s): severity %d action %d disposition %d class %d; want %d %d %d %d", c.i+1, recs[c.i].Event, recs[c.i].Verdict,
				ev.SeverityID, ev.ActionID, ev.DispositionID, ev.ClassUID, c.severity, c.action, c.disposition, c.class)
		}
	}
}

func TestExportUnknownFormat(t *testing.T) {
	path := writeSample(t, sampleTime)
	_, err := Export(&bytes.Buffer{}, []string{path}, ExportOptions{Format: "csv"})
	if err == nil || !strings.Contains(err.Error(), `unknown format "csv" (want jsonl or ocsf)`) {
		t.Fatalf("Export(csv) = %v", err)
	}
}
