package approval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/weir-sec/weir/internal/approval"
)

// TestSchemaGoSDKClient puts Weir's question through the go-sdk v1.8.0
// client, which checks a requested schema against the elicitation rules
// (a flat object; a string property whose oneOf entries each have a
// string const and a title) before its handler sees it, and checks the
// handler's answer against the schema. The handler must get the message
// and the form, a choice offered must pass and read back as what it
// means, and a choice not offered must be refused by the client.
func TestSchemaGoSDKClient(t *testing.T) {
	asks := map[string]approval.Ask{
		"once only": {Tool: "mail/send_email", Rule: "rule flow.exfiltration", Reason: "private data", Sources: []string{"notes/read_note"}, Paths: []string{"$.body"},
			Facts: approval.Facts(json.RawMessage(`{"to":"jay@evil.example","body":"x"}`))},
		"session scope": {Tool: "bank/send_money", Rule: "policy rule payments", Reason: "payments need a person", SessionScope: true,
			Facts: approval.Facts(json.RawMessage(`{"recipient":"GB29NWBK60161331926819","amount":12}`))},
		"session scope, no facts": {Tool: "calc/add", Rule: "policy rule all", Reason: "by hand", SessionScope: true},
	}
	answers := []struct {
		name    string
		result  *mcp.ElicitResult
		offered func(approval.Ask) bool // false: the client must refuse the answer
		want    approval.Answer
	}{
		{"approve", accept(approval.ChoiceApprove), always, approval.Approved},
		{"approve for the session", accept(approval.ChoiceApproveSession), func(a approval.Ask) bool { return a.SessionScope }, approval.ApprovedSession},
		{"deny", accept(approval.ChoiceDeny), always, approval.Declined},
		{"decline", &mcp.ElicitResult{Action: "decline"}, always, approval.Declined},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, always, approval.Cancelled},
		{"a choice never offered", accept("yes"), never, ""},
		{"a number", &mcp.ElicitResult{Action: "accept", Content: map[string]any{approval.Field: 1}}, never, ""},
	}
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		named := version >= "2025-11-25"
		for name, ask := range asks {
			for _, ans := range answers {
				t.Run(version+"/"+name+"/"+ans.name, func(t *testing.T) {
					params := ourParams(t, ask, named)
					got, res, err := elicitThroughSDK(t, version, params, ans.result)
					if got == nil {
						t.Fatalf("the go-sdk client did not hand the question to its handler (%v)", err)
					}
					if got.Message != approval.Message(ask) {
						t.Errorf("the handler got the message %q", got.Message)
					}
					if named && got.Mode != "form" {
						t.Errorf("the handler got mode %q", got.Mode)
					}
					schema, _ := json.Marshal(got.RequestedSchema)
					if !sameJSON(t, schema, approval.Schema(ask)) {
						t.Errorf("the handler got the schema %s, want %s", schema, approval.Schema(ask))
					}
					if !ans.offered(ask) {
						if err == nil {
							t.Fatalf("the go-sdk client passed the answer %+v to a form that does not offer it", ans.result)
						}
						return
					}
					if err != nil {
						t.Fatalf("the go-sdk client refused an answer the form offers: %v", err)
					}
					raw, _ := json.Marshal(res)
					a, err := approval.ReadAnswer(raw, ask.SessionScope)
					if a != ans.want {
						t.Fatalf("ReadAnswer(%s) = %s (%v), want %s", raw, a, err, ans.want)
					}
				})
			}
		}
	}
}

func always(approval.Ask) bool { return true }
func never(approval.Ask) bool  { return false }

func accept(choice string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{approval.Field: choice}}
}

// ourParams decodes ElicitParams into the go-sdk's params, the schema as
// the raw JSON Weir sends.
func ourParams(t *testing.T, ask approval.Ask, named bool) *mcp.ElicitParams {
	t.Helper()
	var p struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(approval.ElicitParams(ask, named), &p); err != nil {
		t.Fatal(err)
	}
	return &mcp.ElicitParams{Mode: p.Mode, Message: p.Message, RequestedSchema: p.RequestedSchema}
}

// elicitThroughSDK connects a go-sdk server and client in memory at the
// protocol version, has the server ask params, and returns what the
// client's handler was asked and what the server got back.
func elicitThroughSDK(t *testing.T, version string, params *mcp.ElicitParams, answer *mcp.ElicitResult) (*mcp.ElicitParams, *mcp.ElicitResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var asked *mcp.ElicitParams
	server := mcp.NewServer(&mcp.Implementation{Name: "weir-test", Version: "1"}, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = req.Params
			return answer, nil
		},
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Fatalf("negotiated %s, want %s", v, version)
	}
	res, err := ss.Elicit(ctx, params)
	if err != nil && strings.Contains(err.Error(), "does not support elicitation") {
		t.Fatal(err)
	}
	return asked, res, err
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
