package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End-to-end tests of `weir audit report` and `weir audit export` on the
// audit log of real sessions: the report rendered in a real headless
// browser (Chromium), and no planted secret in the report or either export
// (DESIGN rule 2).

// chromium returns the path of a headless Chromium, skipping the test (or
// failing it under WEIR_E2E_REQUIRE=1, as CI runs) when none is installed,
// as npmPeer does for the npm servers.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "headless Chromium not installed (Debian: apt-get install chromium)"
	if os.Getenv("WEIR_E2E_REQUIRE") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Chromium's window for the screenshot.
const shotW, shotH = 1280, 2000

// runChromium runs headless Chromium on a local page with extra flags and
// returns its stdout. The profile is the test's own, the network is not
// needed (the page's policy forbids fetching anything), and the sandbox is
// off because CI runs as root.
func runChromium(t *testing.T, bin, page string, flags ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--no-first-run", "--no-default-browser-check", "--user-data-dir=" + t.TempDir(),
		fmt.Sprintf("--window-size=%d,%d", shotW, shotH)}, flags...)
	args = append(args, "file://"+page)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\nstderr:\n%s", flags, err, stderr.String())
	}
	return out
}

// weirOut runs the weir CLI with the test's WEIR_HOME and returns its
// stdout, failing on a non-zero exit.
func weirOut(t *testing.T, env *weirEnv, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(weirBin, args...)
	cmd.Env = env.environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("weir %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// reportSession runs the demo's attack through real proxies, with a person
// answering on the client: a web page with an injection (untrusted) and
// the credentials note (private) enter the session, then the agent mails
// the note out twice (escalated as exfiltration: approved once, declined
// once) and sends an innocent mail (a sink call while the session holds
// the lethal trifecta: warned). Another client sends a mail too.
func reportSession(t *testing.T) *approvalFixture {
	t.Helper()
	f := newApprovalFixture(t, approvalPolicy)
	ctx := ctxT(t, 120*time.Second)
	el := &elicitor{f: f}
	web := f.connectGo(t, ctx, "web", "2025-11-25", "", nil)
	notes := f.connectGo(t, ctx, "notes", "2025-11-25", "", nil)
	mail := f.connectGo(t, ctx, "mail", "2025-11-25", "", el.handle)
	if text, isErr := call(t, ctx, web, "fetch", map[string]any{"url": "https://tidy-desk.example/tips"}); isErr {
		t.Fatalf("fetch: %q", text)
	}
	readCredentials(t, ctx, notes)
	el.queue(accept(choiceApprove), &mcp.ElicitResult{Action: "decline"})
	if text, isErr := call(t, ctx, mail, "send_email", leak("approved")); isErr {
		t.Fatalf("the approved leak: %q", text)
	}
	if text, isErr := call(t, ctx, mail, "send_email", leak("declined")); !isErr {
		t.Fatalf("the declined leak went through: %q", text)
	}
	if text, isErr := call(t, ctx, mail, "send_email", map[string]any{"to": "sam@example.com", "subject": "lunch", "body": "noon?"}); isErr {
		t.Fatalf("the innocent mail: %q", text)
	}
	other := f.connectGo(t, ctx, "mail", "2025-11-25", "another-client", nil)
	if text, isErr := call(t, ctx, other, "send_email", map[string]any{"to": "sam@example.com", "subject": "hi", "body": "hello"}); isErr {
		t.Fatalf("another client's mail: %q", text)
	}
	for _, cs := range []*mcp.ClientSession{web, notes, mail, other} {
		cs.Close()
	}
	return f
}

// TestAuditReportInBrowser renders the report of a real session in
// headless Chromium: a screenshot (kept with -artifacts, logged) that is a
// real picture of the page, and the DOM Chromium built, with every section
// and the counts that the audit log itself gives.
func TestAuditReportInBrowser(t *testing.T) {
	bin := chromium(t)
	f := reportSession(t)
	out := t.TempDir()
	page := filepath.Join(out, "report.html")
	summary := weirOut(t, f.env, "audit", "report", "-o", page)
	t.Logf("weir audit report: %s", summary)

	// What the report should count, from the log itself.
	recs := auditRecords(t, f.env.home)
	want := map[string]int{"records": len(recs)}
	sessions := map[string]bool{}
	var held string // the session of the trifecta verdict
	for _, r := range recs {
		sessions[r["session"].(string)] = true
		if r["rule"] == "flow.trifecta" {
			held = r["session"].(string)
		}
		switch r["event"] {
		case "call":
			want["calls"]++
			want[r["verdict"].(string)]++
		case "approval":
			want["approvals"]++
		}
	}
	want["sessions"] = len(sessions)
	want["trifecta"] = 1
	if want["escalate"] != 2 || want["warn"] != 1 || want["approvals"] < 2 || want["sessions"] != 2 || held == "" {
		t.Fatalf("the session's log is not the scenario: %v", want)
	}

	dom := string(runChromium(t, bin, page, "--dump-dom"))
	for _, section := range []string{"chain", "counts", "timeline", "rules", "tools", "trifecta", "approvals", "definitions"} {
		if !strings.Contains(dom, `<section id="`+section+`"`) {
			t.Errorf("the rendered page has no %s section", section)
		}
	}
	for name, n := range want {
		if !strings.Contains(dom, fmt.Sprintf(`id="count-%s">%d<`, name, n)) {
			m := regexp.MustCompile(`id="count-` + name + `">(\d+)<`).FindStringSubmatch(dom)
			t.Errorf("count %s: the page shows %v, the log has %d", name, m, n)
		}
	}
	for _, s := range []string{
		`data-state="intact"`,
		`<svg id="timeline-chart"`,
		`data-session="` + held + `"`,
		// All three mails were sink calls while the session held the
		// trifecta, though the proxies wrote them to the log in another
		// order than they were made in.
		`3 sink calls, 2 stopped`,
		`<code>web/fetch</code>`, `<code>notes/read_note</code>`, `<code>mail/send_email</code>`,
		`<code>flow.exfiltration</code>`, `<code>flow.trifecta</code>`,
		`data-answer="approved"`, `data-answer="declined"`, `<td>elicitation</td>`,
	} {
		if !strings.Contains(dom, s) {
			t.Errorf("the rendered page lacks %s", s)
		}
	}
	if n := strings.Count(dom, `class="bar"`); n == 0 {
		t.Error("the timeline has no bars")
	}
	if n := strings.Count(dom, `class="approval-row"`); n != want["approvals"] {
		t.Errorf("%d approval rows, the log has %d approval records", n, want["approvals"])
	}

	shot := filepath.Join(t.ArtifactDir(), "audit-report.png")
	runChromium(t, bin, page, "--screenshot="+shot)
	t.Logf("screenshot of the report: %s (keep it with go test -artifacts -outputdir DIR)", shot)
	checkScreenshot(t, shot)
	assertNoDemoSecretAtRest(t, out)
}

// checkScreenshot checks that a screenshot is a picture of the report: a
// PNG of the window's size, not one colour, with the verdict colours of
// the charts in it.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != shotW || b.Dy() != shotH {
		t.Fatalf("the screenshot is %v, want %dx%d", b, shotW, shotH)
	}
	colours := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			colours[rgba(img, x, y)]++
		}
	}
	if len(colours) < 50 {
		t.Errorf("the screenshot has %d colours: not a rendered report", len(colours))
	}
	white := colours[color.RGBA{255, 255, 255, 255}]
	if white > shotW*shotH*97/100 {
		t.Errorf("the screenshot is %d%% white: nothing rendered", 100*white/(shotW*shotH))
	}
	// The charts' verdict colours (report_html.go), drawn as solid bars.
	for name, c := range map[string]color.RGBA{"allow": {0x3a, 0x9b, 0x5c, 255}, "escalate": {0x8e, 0x5b, 0xd8, 255}, "warn": {0xd8, 0x9b, 0x1d, 255}} {
		if colours[c] < 50 {
			t.Errorf("the screenshot has %d pixels of the %s colour: the charts are not drawn", colours[c], name)
		}
	}
}

func rgba(img image.Image, x, y int) color.RGBA {
	r, g, b, a := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

// TestAuditOutputsHoldNoSecret extends the planted-secret test to the
// report and the exports: a real session through server-filesystem and
// server-everything reads the planted secret and tries to leak it every way
// TestExfiltrationAcrossProxies does; then the report, the JSONL export and
// the OCSF export (to files and to stdout) must not hold the secret or its
// encodings, and Weir's own files still do not.
func TestAuditOutputsHoldNoSecret(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t, 90*time.Second)
	files := f.connect(t, ctx, "files", f.filesFS, "")
	every := f.connect(t, ctx, "everything", f.every, "")
	for _, name := range []string{"minutes.txt", "api.env"} {
		if text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(f.dir, name)}); isErr {
			t.Fatalf("reading %s: %q", name, text)
		}
	}
	leaks := []string{
		"minutes: " + secretText,
		base64.StdEncoding.EncodeToString([]byte(secretText)),
		hex.EncodeToString([]byte(secretText)),
		"use " + secretKey,
		base64.RawURLEncoding.EncodeToString([]byte(secretKey)),
	}
	for _, l := range leaks {
		if text, isErr := call(t, ctx, every, "echo", map[string]any{"message": l}); !isErr {
			t.Fatalf("leak not blocked: %q", text)
		}
	}
	if text, isErr := call(t, ctx, every, "echo", map[string]any{"message": "hello"}); isErr {
		t.Fatalf("benign echo: %q", text)
	}
	files.Close()
	every.Close()

	out := t.TempDir()
	weirOut(t, f.env, "audit", "report", "-o", filepath.Join(out, "report.html"))
	weirOut(t, f.env, "audit", "export", "--format", "jsonl", "-o", filepath.Join(out, "audit.jsonl"))
	weirOut(t, f.env, "audit", "export", "--format", "ocsf", "-o", filepath.Join(out, "audit.ocsf.jsonl"))
	for name, args := range map[string][]string{
		"report.stdout.html":      {"audit", "report", "-o", "-"},
		"audit.stdout.jsonl":      {"audit", "export"},
		"audit.ocsf.stdout.jsonl": {"audit", "export", "--format", "ocsf", "--since", "1h"},
	} {
		if err := os.WriteFile(filepath.Join(out, name), weirOut(t, f.env, args...), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// The outputs are about this session: the blocks are there.
	report, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if m := regexp.MustCompile(`id="count-block">(\d+)<`).FindSubmatch(report); m == nil || atoi(m[1]) < len(leaks) {
		t.Errorf("the report counts %s blocked calls, want at least %d", m, len(leaks))
	}
	log, _ := os.ReadFile(filepath.Join(f.env.home, "audit.log"))
	jsonl, _ := os.ReadFile(filepath.Join(out, "audit.jsonl"))
	if !bytes.Equal(jsonl, log) {
		t.Error("the JSONL export is not the audit log's records as they are")
	}
	ocsf, _ := os.ReadFile(filepath.Join(out, "audit.ocsf.jsonl"))
	if n := bytes.Count(ocsf, []byte(`"class_uid":2004`)); n < len(leaks) || bytes.Count(ocsf, []byte("\n")) != bytes.Count(log, []byte("\n")) {
		t.Errorf("the OCSF export has %d findings and %d events for %d records", n, bytes.Count(ocsf, []byte("\n")), bytes.Count(log, []byte("\n")))
	}

	assertNoSecretAtRest(t, out)
	assertNoSecretAtRest(t, f.env.home)
	verifyAudit(t, f.env.home)
}

func atoi(b []byte) int {
	n, _ := strconv.Atoi(string(b))
	return n
}
