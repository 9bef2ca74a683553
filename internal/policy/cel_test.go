package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// compileBound compiles a predicate bound to config.
func compileBound(t testing.TB, src string, config map[string]any) *Predicate {
	t.Helper()
	pr, issues := CompilePredicate(src)
	if len(issues) > 0 {
		t.Fatalf("compile %q: %+v", src, issues)
	}
	p := &Policy{Config: config, Rules: []Rule{{When: pr}}}
	p.BindConfig()
	return p.Rules[0].When
}

func TestPredicateEval(t *testing.T) {
	config := map[string]any{
		"allowed_domains": []any{"corp.example"},
		"max_amount":      int64(500),
		"ratio":           0.5,
		"teams":           map[string]any{"eng": []any{"#eng"}},
		"on":              true,
	}
	vars := Vars{
		Server:           "mail",
		Tool:             "send",
		Args:             map[string]any{"to": "a@evil.example", "amount": 750.0, "cc": []any{"x", "y"}, "n": 3.0},
		Labels:           []string{"sink"},
		Legs:             []string{"private", "untrusted"},
		Sources:          []string{"notes/read_note", "web/fetch"},
		Provenance:       map[string][]string{"$.to": {"untrusted"}, "$.body": {"private"}},
		RecipientDomains: []string{"evil.example"},
		URLHosts:         []string{"corp.example"},
	}
	tests := []struct {
		src     string
		want    bool
		wantErr string // substring of the error; "" for none
	}{
		{`true`, true, ""},
		{`server == "mail" && tool == "send"`, true, ""},
		{`"sink" in labels`, true, ""},
		{`"private" in session.legs && "untrusted" in session.legs`, true, ""},
		{`session.sources.exists(s, s.startsWith("web/"))`, true, ""},
		{`"untrusted" in provenance["$.to"]`, true, ""},
		{`provenance.exists(p, "private" in provenance[p])`, true, ""},
		{`recipient_domains.exists(d, !(d in config.allowed_domains))`, true, ""},
		{`url_hosts.all(h, h in config.allowed_domains)`, true, ""},
		{`args.amount > config.max_amount`, true, ""},     // double > int
		{`args.amount > 1000`, false, ""},                 // double > int literal
		{`args.n == 3`, true, ""},                         // JSON 3.0 equals 3
		{`args.amount * config.ratio == 375.0`, true, ""}, //
		{`size(args.cc) == 2`, true, ""},
		{`args.to.endsWith("@corp.example")`, false, ""},
		{`has(args.bcc)`, false, ""},
		{`"bcc" in args`, false, ""},
		{`args.?bcc.orValue("") == ""`, true, ""},
		{`"#eng" in config.teams.eng`, true, ""},
		{`config.on`, true, ""},
		{`args.to.lowerAscii().contains("evil")`, true, ""},
		{`args.bcc == "x"`, false, "no such key: bcc"},
		{`args.to > 3`, false, "no such overload"},
		{`int(args.to) > 0`, false, "*"},
		{`args.cc`, false, "not true or false"}, // dyn: checked at evaluation
		{`config.missing == 1`, false, "no such key"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			pr := compileBound(t, tt.src, config)
			got, err := pr.Eval(vars)
			if tt.wantErr != "" || err != nil {
				if tt.wantErr == "" {
					t.Fatalf("Eval: %v", err)
				}
				if err == nil || tt.wantErr != "*" && !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Eval error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if got != tt.want {
				t.Errorf("Eval = %v, want %v", got, tt.want)
			}
			ctxGot, ctxErr := pr.EvalContext(context.Background(), vars)
			if ctxGot != got || ctxErr != nil {
				t.Errorf("EvalContext = %v, %v", ctxGot, ctxErr)
			}
		})
	}
}

// TestPredicateEmptyVars checks that nil slices and maps read as empty, not
// as errors.
func TestPredicateEmptyVars(t *testing.T) {
	for _, src := range []string{
		`size(labels) == 0`, `size(session.legs) == 0 && size(session.sources) == 0`,
		`size(provenance) == 0`, `size(recipient_domains) == 0 && size(url_hosts) == 0`,
		`size(args) == 0`, `server == "" && tool == ""`, `size(config) == 0`,
	} {
		pr, issues := CompilePredicate(src) // an unbound predicate reads an empty config
		if len(issues) > 0 {
			t.Fatalf("compile %q: %+v", src, issues)
		}
		if ok, err := pr.Eval(Vars{}); !ok || err != nil {
			t.Errorf("%s = %v, %v", src, ok, err)
		}
	}
}

// TestPredicateCostLimit checks that a predicate that would run for a long
// time is stopped, and that the stop is an error (which blocks the call).
func TestPredicateCostLimit(t *testing.T) {
	big := make([]any, 2000)
	for i := range big {
		big[i] = "x"
	}
	vars := Vars{Args: map[string]any{"items": big}}
	for _, src := range []string{
		`args.items.all(a, args.items.all(b, a == b))`,                 // 4 million comparisons
		`args.items.map(a, args.items.map(b, a + b)).size() > 0`,       // 4 million concatenations
		`lists.range(10000).all(i, lists.range(10000).all(j, i >= 0))`, // no argument needed
	} {
		pr := compileBound(t, src, nil)
		_, err := pr.Eval(vars)
		if err == nil || !errCost(err) {
			t.Errorf("%s: error = %v, want the cost limit", src, err)
		}
	}
	// A single pass over the same list is well within the limit.
	pr := compileBound(t, `args.items.all(a, a == "x")`, nil)
	if ok, err := pr.Eval(vars); !ok || err != nil {
		t.Errorf("single pass = %v, %v", ok, err)
	}
}

func TestPredicateContextCancel(t *testing.T) {
	big := make([]any, 1000)
	for i := range big {
		big[i] = 1.0
	}
	pr := compileBound(t, `args.items.all(a, a == 1.0)`, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := pr.EvalContext(ctx, Vars{Args: map[string]any{"items": big}})
	if err == nil {
		t.Error("cancelled evaluation succeeded")
	}
}

func TestPredicateZero(t *testing.T) {
	var pr *Predicate
	if _, err := pr.Eval(Vars{}); !errors.Is(err, errNoProgram) {
		t.Errorf("nil predicate: %v", err)
	}
	if _, err := (&Predicate{}).Eval(Vars{}); !errors.Is(err, errNoProgram) {
		t.Errorf("zero predicate: %v", err)
	}
}

// TestConfigIsThePolicys checks that a predicate reads config from its
// policy and nothing a call sends can stand in for it.
