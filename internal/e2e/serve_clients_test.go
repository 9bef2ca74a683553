package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Real Streamable HTTP clients against `weir serve`: the TypeScript SDK
// client, the MCP inspector CLI and the go-sdk client, each run directly
// against a real server and through weir serve in front of it. The two runs
// must come out the same: same tools, same answers, and the progress
// notifications a long call sends reach the client through Weir.

// startEverythingHTTP starts the npm server-everything in its
// streamableHttp mode (it listens on $PORT, on every interface) on a port
// free on loopback, waits until it accepts TCP connections and returns its
// MCP URL. It skips the test when the npm peers are not installed.
func startEverythingHTTP(t testing.TB) string {
	t.Helper()
	argv := append(serverEverything(t), "streamableHttp")
	addr := freeLoopbackAddr(t)
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return listening(t, "server-everything", addr, 15*time.Second, append(os.Environ(), "PORT="+port), argv...)
}

// runNodeCLI runs argv (node and a script) with args in dir and returns its
// stdout, failing the test with its stderr when it exits non-zero or takes
// longer than a minute.
func runNodeCLI(t *testing.T, dir string, argv []string, args ...string) []byte {
	t.Helper()
	return runNodeCLIEnv(t, dir, nil, argv, args...)
}

// runNodeCLIEnv is runNodeCLI with more environment.
func runNodeCLIEnv(t *testing.T, dir string, env []string, argv []string, args ...string) []byte {
	t.Helper()
	ctx := ctxT(t, time.Minute)
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not finish within 1m; stderr:\n%s", filepath.Base(argv[1]), strings.Join(args, " "), stderr.String())
	}
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(argv[1]), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// httpClientRun is what testdata/npm/http-client.mjs prints.
type httpClientRun struct {
	ProtocolVersion string   `json:"protocolVersion"`
	SessionID       bool     `json:"sessionId"`
	ServerName      string   `json:"serverName"`
	Tools           []string `json:"tools"`
	Echo            string   `json:"echo"`
	Progress        []struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
	} `json:"progress"`
	LongRunning      string   `json:"longRunning"`
	Resources        []string `json:"resources"`
	ResourceURI      string   `json:"resourceUri"`
	ResourceMIMEType string   `json:"resourceMimeType"`
	ResourceText     string   `json:"resourceText"`
	PromptMessages   int      `json:"promptMessages"`
	PromptText       string   `json:"promptText"`
	Terminate        string   `json:"terminate"`
}

func runHTTPClient(t *testing.T, script []string, url string, env ...string) httpClientRun {
	t.Helper()
	out := runNodeCLIEnv(t, t.TempDir(), env, script, url)
	var r httpClientRun
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("http-client.mjs against %s printed %q: %v", url, out, err)
	}
	return r
}

// TestServeTypeScriptClient runs the TypeScript SDK's Streamable HTTP
// client (testdata/npm/http-client.mjs: tools, echo, a long-running call
// with progress, a resource, a prompt) against server-everything directly
// and through weir serve: both runs must give the same results.
func TestServeTypeScriptClient(t *testing.T) {
	t.Parallel()
	script := npmPeer(t, "http-client.mjs")
	upstream := startEverythingHTTP(t)

	direct := runHTTPClient(t, script, upstream)
	if direct.ProtocolVersion != "2025-11-25" || !direct.SessionID {
		t.Fatalf("direct: protocol %q, session id %v; want 2025-11-25 with a session", direct.ProtocolVersion, direct.SessionID)
	}
	if !slices.Contains(direct.Tools, "echo") || direct.Echo != "Echo: weir says hello" ||
		len(direct.Progress) != 3 || direct.ResourceText == "" || direct.PromptMessages != 1 || direct.Terminate != "ok" {
		t.Fatalf("direct run is not what the test expects of server-everything: %+v", direct)
	}

	through := runHTTPClient(t, script, startServe(t, newWeirEnv(t), upstream))
	if len(through.Progress) == 0 {
		t.Errorf("no progress notification reached the client through weir serve (direct: %d)", len(direct.Progress))
	}
	dv, tv := reflect.ValueOf(direct), reflect.ValueOf(through)
	for i := range dv.NumField() {
		if d, w := dv.Field(i).Interface(), tv.Field(i).Interface(); !reflect.DeepEqual(d, w) {
			t.Errorf("%s differs through weir serve:\n  direct:  %s\n  through: %s", dv.Type().Field(i).Name, shortJSON(d), shortJSON(w))
		}
	}
}

func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// TestServeInspectorCLI runs the MCP inspector CLI (inspector-cli --cli,
// Streamable HTTP) against server-everything directly and through weir
// serve: tools/list, tools/call echo and prompts/get must print the same.
func TestServeInspectorCLI(t *testing.T) {
	t.Parallel()
	cli := npmPeer(t, "node_modules/@modelcontextprotocol/inspector-cli/build/cli.js")
	upstream := startEverythingHTTP(t)
	through := startServe(t, newWeirEnv(t), upstream)
	// The CLI finds its own package.json as ../package.json of the working
	// directory, so it runs from its build directory.
	dir := filepath.Dir(cli[1])

	for _, c := range []struct {
		name string
		args []string
		want string // in the direct output
	}{
		{"tools/list", []string{"--method", "tools/list"}, `"name": "echo"`},
		{"tools/call echo", []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=through weir"}, `"text": "Echo: through weir"`},
		{"prompts/get", []string{"--method", "prompts/get", "--prompt-name", "simple-prompt"}, `This is a simple prompt without arguments.`},
	} {
		t.Run(strings.ReplaceAll(c.name, "/", "_"), func(t *testing.T) {
			run := func(url string) any {
				out := runNodeCLI(t, dir, cli, append([]string{"--cli", url, "--transport", "http"}, c.args...)...)
				if !bytes.Contains(out, []byte(c.want)) {
					t.Fatalf("inspector %s against %s: no %s in its output:\n%s", c.name, url, c.want, out)
				}
				var v any
				if err := json.Unmarshal(out, &v); err != nil {
					t.Fatalf("inspector %s against %s printed %q: %v", c.name, url, out, err)
				}
				return v
			}
			d, w := run(upstream), run(through)
			if !reflect.DeepEqual(d, w) {
				t.Errorf("inspector %s differs through weir serve:\n  direct:  %s\n  through: %s", c.name, shortJSON(d), shortJSON(w))
			}
		})
	}
}

// goSDKRun is what the go-sdk client saw in one session.
type goSDKRun struct {
	protocol  string
	sessionID bool
	tools     []string
	echo      string   // the text of the echo-like call
	result    string   // the text of the call with progress
	progress  []string // "progress/total" of each notification, in order
}

// goSDKPlan is what one go-sdk session asks for.
type goSDKPlan struct {
	version      string // asked of Connect; "" is the SDK's default (2026-07-28, then initialize)
	weirSession  string // sent as the Weir-Session header when not ""
	echo         *mcp.CallToolParams
	progress     *mcp.CallToolParams // carries a progress token
	wantProgress int                 // notifications to wait (briefly) for
}

// serveHeaderTransport adds a header to every request.
type serveHeaderTransport struct{ name, value string }

func (h serveHeaderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// goSDKSession runs the go-sdk client over Streamable HTTP against url,
// lists tools, makes the plan's echo call and progress call, and returns
// what it saw.
func goSDKSession(t *testing.T, url string, plan goSDKPlan) goSDKRun {
	t.Helper()
	ctx := ctxT(t, time.Minute)
	var mu sync.Mutex
	var run goSDKRun
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-go-http", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.ProgressToken == plan.progress.GetProgressToken() {
				run.progress = append(run.progress, fmt.Sprintf("%g/%g", req.Params.Progress, req.Params.Total))
			} else {
				run.progress = append(run.progress, fmt.Sprintf("token %v: %g/%g", req.Params.ProgressToken, req.Params.Progress, req.Params.Total))
			}
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	if plan.weirSession != "" {
		tr.HTTPClient = &http.Client{Transport: serveHeaderTransport{"Weir-Session", plan.weirSession}}
	}
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: plan.version})
	if err != nil {
		t.Fatalf("connecting to %s (protocol %q): %v", url, plan.version, err)
	}
	defer cs.Close()
	run.protocol = cs.InitializeResult().ProtocolVersion
	run.sessionID = cs.ID() != ""

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list against %s: %v", url, err)
	}
	for _, tl := range tools.Tools {
		run.tools = append(run.tools, tl.Name)
	}
	slices.Sort(run.tools)

	text := func(p *mcp.CallToolParams) string {
		t.Helper()
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("calling %s against %s: %v", p.Name, url, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("calling %s against %s: error result %q", p.Name, url, b.String())
		}
		return b.String()
	}
	run.echo = text(plan.echo)
	run.result = text(plan.progress)
	// The notifications come before the result on the same stream, but the
	// client hands them to the handler asynchronously: wait for them.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(run.progress)
		mu.Unlock()
		if n >= plan.wantProgress {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return run
}

// compareGoSDK fails on every difference between the direct and the
// through-weir run.
func compareGoSDK(t *testing.T, direct, through goSDKRun) {
	t.Helper()
	if direct.protocol != through.protocol || direct.sessionID != through.sessionID {
		t.Errorf("protocol %s (session id %v) directly, %s (session id %v) through weir serve",
			direct.protocol, direct.sessionID, through.protocol, through.sessionID)
	}
	if !slices.Equal(direct.tools, through.tools) {
		t.Errorf("tools differ through weir serve:\n  direct:  %v\n  through: %v", direct.tools, through.tools)
	}
	if direct.echo != through.echo || direct.result != through.result {
		t.Errorf("call results differ through weir serve:\n  direct:  %q, %q\n  through: %q, %q", direct.echo, direct.result, through.echo, through.result)
	}
	if !slices.Equal(direct.progress, through.progress) {
		t.Errorf("progress notifications differ through weir serve:\n  direct:  %v\n  through: %v", direct.progress, through.progress)
	}
}

// startServeNoSession is startServe with no WEIR_SESSION in weir serve's
// environment, so a stateless request must name its Weir session itself.
func startServeNoSession(t testing.TB, upstream string) string {
	t.Helper()
	env := newWeirEnv(t)
	env.session = ""
	var environ []string
	for _, kv := range env.environ() {
		if !strings.HasPrefix(kv, "WEIR_SESSION=") {
			environ = append(environ, kv)
		}
	}
	addr := freeLoopbackAddr(t)
	out, done := startDaemon(t, environ, weirBin, "serve", "--upstream", upstream, "--name", "everything", "--listen", addr)
	awaitHealthy(t, "weir serve", "http://"+addr, out, done)
	return "http://" + addr + "/mcp"
}

// TestServeGoSDKClient runs the go-sdk v1.8.0 client over Streamable HTTP
// through weir serve: the 2025-11-25 session protocol in front of the npm
// server-everything, the SDK's default connect (server/discover first,
// then the initialize fallback a 2025 server needs) in front of the same,
// and the stateless 2026-07-28 protocol in front of the go-sdk conformance
// everything-server in stateless mode, its Weir session named by
// WEIR_SESSION or by the Weir-Session header. Each is compared with the
// same client directly against the server.
func TestServeGoSDKClient(t *testing.T) {
	t.Parallel()

	everything := func(t *testing.T, version string) {
		upstream := startEverythingHTTP(t)
		plan := goSDKPlan{
			version:      version,
			echo:         &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "weir says hello"}},
			progress:     &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.6, "steps": 3}},
			wantProgress: 3,
		}
		plan.progress.SetProgressToken("weir-progress-1")
		direct := goSDKSession(t, upstream, plan)
		if direct.protocol != "2025-11-25" || !direct.sessionID || direct.echo != "Echo: weir says hello" || len(direct.progress) != 3 {
			t.Fatalf("direct run is not what the test expects of server-everything: %+v", direct)
		}
		compareGoSDK(t, direct, goSDKSession(t, startServe(t, newWeirEnv(t), upstream), plan))
	}
	t.Run("2025-11-25", func(t *testing.T) {
		t.Parallel()
		everything(t, "2025-11-25")
	})
	t.Run("default-connect", func(t *testing.T) {
		t.Parallel()
		everything(t, "")
	})

	stateless := func(t *testing.T) (upstream string, plan goSDKPlan, direct goSDKRun) {
		upstream = startEverything(t, true)
		plan = goSDKPlan{
			version:      "2026-07-28",
			echo:         &mcp.CallToolParams{Name: "test_simple_text", Arguments: map[string]any{}},
			progress:     &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}},
			wantProgress: 3,
		}
		plan.progress.SetProgressToken("weir-progress-2")
		direct = goSDKSession(t, upstream, plan)
		if direct.protocol != "2026-07-28" || direct.sessionID || len(direct.progress) != 3 || direct.result != "weir-progress-2" {
			t.Fatalf("direct run is not what the test expects of the stateless everything-server: %+v", direct)
		}
		return upstream, plan, direct
	}
	t.Run("2026-07-28-stateless", func(t *testing.T) {
		t.Parallel()
		upstream, plan, direct := stateless(t)
		compareGoSDK(t, direct, goSDKSession(t, startServe(t, newWeirEnv(t), upstream), plan))
	})
	t.Run("2026-07-28-weir-session-header", func(t *testing.T) {
		t.Parallel()
		upstream, plan, direct := stateless(t)
		url := startServeNoSession(t, upstream)
		plan.weirSession = "alice"
		compareGoSDK(t, direct, goSDKSession(t, url, plan))

		// Naming no Weir session, the client's server/discover is refused
		// (Weir does not guess a session); the go-sdk client then falls
		// back to initialize, and Weir serves it a 2025-11-25 HTTP session.
		plan.weirSession = ""
		fallback := goSDKSession(t, url, plan)
		if fallback.protocol != "2025-11-25" || !fallback.sessionID {
			t.Errorf("without a Weir session: protocol %s, session id %v; want the 2025-11-25 fallback with an HTTP session", fallback.protocol, fallback.sessionID)
		}
		if !slices.Equal(fallback.tools, direct.tools) || fallback.result != direct.result || !slices.Equal(fallback.progress, direct.progress) {
			t.Errorf("the 2025-11-25 fallback through weir serve differs from the direct 2026-07-28 run: %+v vs %+v", fallback, direct)
		}
	})
}

// TestGatewayTypeScriptAndInspector: the TypeScript SDK client and the
// inspector CLI against npm server-everything (streamableHttp) directly
// and through `weir gateway` in front of it: the same tools, calls,
// progress, resources and prompts, under the gateway's names.
func TestGatewayTypeScriptAndInspector(t *testing.T) {
	t.Parallel()
	script := npmPeer(t, "http-client.mjs")
	cli := npmPeer(t, "node_modules/@modelcontextprotocol/inspector-cli/build/cli.js")
	upstream := startEverythingHTTP(t)
	g := startGatewayHTTP(t, gwEnv(newWeirEnv(t)), writeGatewayConfig(t, "", gwURL("ev", upstream)))

	direct := runHTTPClient(t, script, upstream)
	through := runHTTPClient(t, script, g.endpoint(), "WEIR_GATEWAY_SERVER=ev")
	if through.ServerName != "weir-gateway" {
		t.Errorf("server name through the gateway = %q, want weir-gateway", through.ServerName)
	}
	if len(direct.Tools) == 0 || len(direct.Progress) == 0 {
		t.Fatalf("direct run is not what the test expects of server-everything: %+v", direct)
	}
	dv, tv := reflect.ValueOf(direct), reflect.ValueOf(through)
	for i := range dv.NumField() {
		if dv.Type().Field(i).Name == "ServerName" {
			continue
		}
		if d, w := dv.Field(i).Interface(), tv.Field(i).Interface(); !reflect.DeepEqual(d, w) {
			t.Errorf("%s differs through weir gateway:\n  direct:  %s\n  through: %s", dv.Type().Field(i).Name, shortJSON(d), shortJSON(w))
		}
	}

	dir := filepath.Dir(cli[1])
	inspect := func(url string, args ...string) string {
		return string(runNodeCLI(t, dir, cli, append([]string{"--cli", url, "--transport", "http"}, args...)...))
	}
	if out := inspect(g.endpoint(), "--method", "tools/list"); !strings.Contains(out, `"name": "ev__echo"`) {
		t.Errorf("inspector tools/list through the gateway has no ev__echo:\n%s", out)
	}
	for _, c := range [][2][]string{
		{{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"}, {"--method", "tools/call", "--tool-name", "ev__echo", "--tool-arg", "message=hi"}},
		{{"--method", "prompts/get", "--prompt-name", "simple-prompt"}, {"--method", "prompts/get", "--prompt-name", "ev__simple-prompt"}},
	} {
		if d, w := inspect(upstream, c[0]...), inspect(g.endpoint(), c[1]...); d != w {
			t.Errorf("inspector %v differs through the gateway:\n  direct:  %s\n  through: %s", c[1], d, w)
		}
	}
}
