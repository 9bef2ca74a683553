package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
)

// MaxPredicateCost bounds the work one evaluation of a `when` predicate may
// do, in CEL's cost units (roughly one per operation, one per element a
// comprehension visits). It keeps a predicate over a huge argument from
// stalling a call; an evaluation that exceeds it is an error, and an error
// blocks the call. A predicate over a list of ten thousand elements stays
// well under it.
const MaxPredicateCost = 100_000

// celVars are the variables of the predicate environment, in the order the
// package doc lists them.
var celVars = []struct {
	name string
	typ  *cel.Type
}{
	{"server", cel.StringType},
	{"tool", cel.StringType},
	{"args", cel.MapType(cel.StringType, cel.DynType)},
	{"labels", cel.ListType(cel.StringType)},
	{"session", cel.MapType(cel.StringType, cel.ListType(cel.StringType))},
	{"provenance", cel.MapType(cel.StringType, cel.ListType(cel.StringType))},
	{"recipient_domains", cel.ListType(cel.StringType)},
	{"url_hosts", cel.ListType(cel.StringType)},
	{"config", cel.MapType(cel.StringType, cel.DynType)},
}

func celVarNames() []string {
	names := make([]string, len(celVars))
	for i, v := range celVars {
		names[i] = v.name
	}
	return names
}

// celEnv is the one typed environment every predicate is compiled in. It is
// the same for every policy: config is typed map(string, dyn) and bound to
// the policy's values at evaluation, from the policy, never from the call.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.CrossTypeNumericComparisons(true), // args.count > 5 with JSON's doubles
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Lists(ext.ListsMaxRangeSize(10_000)),
	}
	for _, v := range celVars {
		opts = append(opts, cel.Variable(v.name, v.typ))
	}
	return cel.NewEnv(opts...)
})

// Predicate is a compiled `when` expression, bound to the config of the
// policy it belongs to. It is safe for concurrent use.
type Predicate struct {
	src    string
	prg    cel.Program
	config ref.Val // the owning policy's config; nil reads as an empty map

	// configKeys are the config keys the expression names literally
	// (config.x, config["x"]), checked against the policy's config at load.
	configKeys []ConfigKey
}

// ConfigKey is a config key an expression names literally, and where.
type ConfigKey struct {
	Name      string
	Line, Col int // CEL's position of the reference (1-based line, 0-based column)
}

// ConfigKeys returns the config keys the expression names literally
// (config.x, config["x"]), for a loader to check against the policy's
// config. It is empty when a comprehension variable shadows config.
func (pr *Predicate) ConfigKeys() []ConfigKey { return pr.configKeys }

// PredicateVariables lists the variables a predicate can read, in the order
// the package doc gives them.
func PredicateVariables() []string { return celVarNames() }

// Vars is everything about a call a predicate can read, apart from the
// policy's own config. The engine fills it; see the package doc for what
// each field holds. Nil slices and maps read as empty.
type Vars struct {
	Server, Tool string
	// Args are the call's arguments as encoding/json decodes them (numbers
	// are float64).
	Args map[string]any
	// Labels are the labels of the tool being called.
	Labels []string
	// Legs are the trifecta legs the session holds ("private",
	// "untrusted"); Sources the results it has seen, as "server/tool".
	Legs, Sources []string
	// Provenance maps an argument's JSON path ("$.to") to the labels of the
	// sources it attributes to.
	Provenance map[string][]string
	// RecipientDomains are the domains of the e-mail addresses in the
	// arguments, URLHosts the hosts of the URLs, both in canonical form
	// ([CanonicalHost]).
	RecipientDomains, URLHosts []string
	// RateExceeded lists the IDs of the rules whose rate_limit this call
	// exceeds, as the state store counts them. It is not visible to
	// predicates; [Policy.Fire] fires those rules with a block.
	RateExceeded []string
}

// Source returns the expression as written.
func (pr *Predicate) Source() string { return pr.src }

// Eval evaluates the predicate for one call. Any error (a missing key, a
// wrong type, the cost limit) is returned; the engine treats it as a block,
// so a predicate that cannot be evaluated fails closed.
func (pr *Predicate) Eval(vars Vars) (bool, error) {
	return pr.EvalContext(context.Background(), vars)
}

// EvalContext is Eval with cancellation: comprehensions check ctx every
// hundred iterations. The cost limit, not a deadline, is what bounds a
// decision, so that the same inputs always give the same verdict; ctx is for
// a caller that is shutting down.
func (pr *Predicate) EvalContext(ctx context.Context, vars Vars) (bool, error) {
	if pr == nil {
		return false, errNoProgram
	}
	return pr.eval(ctx, &activation{v: vars, config: pr.config})
}

var errNoProgram = errors.New("predicate was not compiled")

func (pr *Predicate) eval(ctx context.Context, act *activation) (ok bool, err error) {
	if pr == nil || pr.prg == nil {
		return false, errNoProgram
	}
	defer func() {
		if r := recover(); r != nil { // CEL is not ours; rule 5
			ok, err = false, fmt.Errorf("predicate panicked: %v", r)
		}
	}()
	var out ref.Val
	if ctx.Done() == nil { // cannot be cancelled: skip the interrupt checks
		out, _, err = pr.prg.Eval(act)
	} else {
		out, _, err = pr.prg.ContextEval(ctx, act)
	}
	if err != nil {
		return false, err
	}
	b, isBool := out.(types.Bool)
	if !isBool {
		return false, fmt.Errorf("the expression gave %s, not true or false", out.Type().TypeName())
	}
	return bool(b), nil
}

// errCost reports whether err is CEL's cost-limit error.
func errCost(err error) bool {
	return err != nil && strings.Contains(err.Error(), "cost limit exceeded")
}

// activation resolves the predicate variables from a Vars lazily: only the
// variables an expression names are converted, and each at most once per
// call, however many predicates read it.
type activation struct {
	v      Vars
	config ref.Val
	cache  [len(celVarNamesArray)]ref.Val
}

// celVarNamesArray fixes the cache slots.
var celVarNamesArray = [...]string{"server", "tool", "args", "labels", "session", "provenance", "recipient_domains", "url_hosts"}

func (a *activation) ResolveName(name string) (any, bool) {
	if name == "config" {
		if a.config == nil {
			return types.NewStringInterfaceMap(types.DefaultTypeAdapter, nil), true
		}
		return a.config, true
	}
	i := slices.Index(celVarNamesArray[:], name)
	if i < 0 {
		return nil, false
	}
	if v := a.cache[i]; v != nil {
		return v, true
	}
	ad := types.DefaultTypeAdapter
	var v ref.Val
	switch i {
	case 0:
		v = types.String(a.v.Server)
	case 1:
		v = types.String(a.v.Tool)
	case 2:
		v = types.NewStringInterfaceMap(ad, a.v.Args)
	case 3:
		v = types.NewStringList(ad, a.v.Labels)
	case 4:
		v = types.NewStringInterfaceMap(ad, map[string]any{"legs": a.v.Legs, "sources": a.v.Sources})
	case 5:
		m := make(map[string]any, len(a.v.Provenance))
		for k, l := range a.v.Provenance {
			m[k] = l
		}
		v = types.NewStringInterfaceMap(ad, m)
	case 6:
		v = types.NewStringList(ad, a.v.RecipientDomains)
	case 7:
		v = types.NewStringList(ad, a.v.URLHosts)
	}
	a.cache[i] = v
	return v, true
}

func (a *activation) Parent() interpreter.Activation { return nil }

// celConfigValue converts a policy's config for predicates.
func celConfigValue(config map[string]any) ref.Val {
	return types.NewStringInterfaceMap(types.DefaultTypeAdapter, config)
}

// PredicateIssue is one problem CEL found in an expression, at CEL's
// position.
type PredicateIssue struct {
	Line, Col int // 1-based line, 0-based column within the expression; 0, 0 if unknown
	Msg       string
}

// CompilePredicate parses and type-checks a `when` expression. The result
// is bound to a config by [Policy.BindConfig]; until then config reads as
// an empty map.
func CompilePredicate(src string) (*Predicate, []PredicateIssue) {
	env, err := celEnv()
	if err != nil {
		return nil, []PredicateIssue{{Msg: fmt.Sprintf("the predicate environment could not be built (%v)", err)}}
	}
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		var out []PredicateIssue
		for _, e := range iss.Errors() {
			ci := PredicateIssue{Msg: e.Message}
			if e.Location != nil {
				ci.Line, ci.Col = e.Location.Line(), e.Location.Column()
			}
			out = append(out, ci)
		}
		return nil, out
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, []PredicateIssue{{Line: 1, Msg: fmt.Sprintf("the expression gives %s; when must give true or false (compare the value, e.g. %s)", typeName(t), boolHint(t))}}
	}
	prg, err := env.Program(ast,
		cel.CostLimit(MaxPredicateCost),
		cel.InterruptCheckFrequency(100),
		cel.EvalOptions(cel.OptOptimize), // fold constants once, at load
	)
	if err != nil {
		return nil, []PredicateIssue{{Msg: err.Error()}}
	}
	return &Predicate{src: src, prg: prg, configKeys: configKeysOf(ast)}, nil
}

func typeName(t *cel.Type) string {
	switch {
	case t.IsExactType(cel.StringType):
		return "a string"
	case t.IsExactType(cel.IntType), t.IsExactType(cel.UintType), t.IsExactType(cel.DoubleType):
		return "a number"
	case t.Kind() == types.ListKind:
		return "a list"
	case t.Kind() == types.MapKind:
		return "a map"
	}
	return t.String()
}

func boolHint(t *cel.Type) string {
	switch {
	case t.IsExactType(cel.StringType):
		return `tool == "send"`
	case t.Kind() == types.ListKind:
		return `"private" in session.legs, or size(labels) > 0`
	case t.Kind() == types.MapKind:
		return `"to" in args`
	}
	return "args.count > 10"
}

// configKeysOf returns the config keys an expression names literally. When
// a comprehension variable shadows config, it returns none: what config
// means there is not the policy's.
func configKeysOf(a *cel.Ast) []ConfigKey {
	native := a.NativeRep()
	info := native.SourceInfo()
	var keys []ConfigKey
	shadowed := false
	at := func(id int64, name string) {
		loc := info.GetStartLocation(id)
		keys = append(keys, ConfigKey{Name: name, Line: loc.Line(), Col: loc.Column()})
	}
	isConfig := func(e celast.Expr) bool {
		return e.Kind() == celast.IdentKind && e.AsIdent() == "config"
	}
	celast.PostOrderVisit(native.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.ComprehensionKind:
			c := e.AsComprehension()
			if c.IterVar() == "config" || c.IterVar2() == "config" || c.AccuVar() == "config" {
				shadowed = true
			}
		case celast.SelectKind:
			s := e.AsSelect()
			if isConfig(s.Operand()) && !s.IsTestOnly() {
				at(e.ID(), s.FieldName())
			}
		case celast.CallKind:
			c := e.AsCall()
			if c.FunctionName() != operators.Index || len(c.Args()) != 2 || !isConfig(c.Args()[0]) {
				return
			}
			if k := c.Args()[1]; k.Kind() == celast.LiteralKind {
				if s, ok := k.AsLiteral().(types.String); ok {
					at(e.ID(), string(s))
				}
			}
		}
	}))
	if shadowed {
		return nil
	}
	return keys
}

// String is the predicate's expression as written ("" for none).
func (p *Predicate) String() string {
	if p == nil {
		return ""
	}
	return p.src
}
