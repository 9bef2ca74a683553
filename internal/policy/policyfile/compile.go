package policyfile

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/weir-sec/weir/internal/policy"
)

// parseFlowRule parses an allow_flows entry, "FROM -> TO".
func parseFlowRule(text string) (policy.FlowRule, error) {
	const example = `e.g. "notes:* -> slack:post_message"`
	n := strings.Count(text, "->")
	if n == 0 {
		return policy.FlowRule{}, fmt.Errorf(`missing "->"; write a flow as "FROM -> TO", %s`, example)
	}
	if n > 1 {
		return policy.FlowRule{}, fmt.Errorf(`more than one "->"; write one flow per entry as "FROM -> TO", %s`, example)
	}
	from, to, _ := strings.Cut(text, "->")
	from, to = strings.TrimSpace(from), strings.TrimSpace(to)
	if from == "" {
		return policy.FlowRule{}, fmt.Errorf(`nothing before "->"; name the source tools, %s`, example)
	}
	if to == "" {
		return policy.FlowRule{}, fmt.Errorf(`nothing after "->"; name the sink tools, %s`, example)
	}
	var r policy.FlowRule
	var err error
	if r.From, err = policy.CompileGlob(from); err != nil {
		return policy.FlowRule{}, fmt.Errorf("source: %v", err)
	}
	if r.To, err = policy.CompileGlob(to); err != nil {
		return policy.FlowRule{}, fmt.Errorf("sink: %v", err)
	}
	r.Text = text
	return r, nil
}

// compileHostPattern checks a hosts pattern and returns its canonical form.
func compileHostPattern(p string) (string, error) {
	const example = `write a host name such as "corp.example", or "*.corp.example" for its subdomains`
	if p == "" {
		return "", errors.New("empty pattern; " + example)
	}
	if strings.Contains(p, "://") || strings.ContainsAny(p, "/@") {
		return "", fmt.Errorf("%s is not a host name; %s (no scheme, path or user)", quote(p), example)
	}
	wild := false
	if rest, ok := strings.CutPrefix(p, "*."); ok {
		wild, p = true, rest
	}
	if strings.Contains(p, "*") {
		return "", fmt.Errorf("a * may only start a pattern, as in \"*.corp.example\"; %s", example)
	}
	if !strings.HasPrefix(p, "[") && strings.Count(p, ":") == 1 {
		return "", fmt.Errorf("%s has a port; ports are not matched, write the host alone", quote(p))
	}
	h, err := policy.CanonicalHost(p)
	if err != nil {
		return "", fmt.Errorf("%s: %v; %s", quote(p), err, example)
	}
	h = policy.SiteHost(h)
	if wild {
		if _, err := netip.ParseAddr(h); err == nil {
			return "", fmt.Errorf("*. cannot prefix an IP address")
		}
		return "*." + h, nil
	}
	return h, nil
}
