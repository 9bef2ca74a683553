package detect

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The definition scorer is a logistic regression over the words and word
// pairs of a tool's description and schemas (see eachFeature for which),
// trained on the
// published poisoned definitions and the real catalogues in testdata (see
// bench/poisoning/train, which writes model.bin). It catches the poisoned
// definitions whose wording no hand-written rule names yet, and it only
// adds findings: a definition it does not score above its threshold is
// judged by the rules alone. Its findings are Medium, so it warns and
// never withholds a tool on its own.
//
// Features are hashed into ModelBuckets buckets; each counts once per
// definition, whatever its repetitions, so scoring is linear in the
// definition's length and a hostile definition cannot push the score up
// by repeating a word, nor hide a payload behind decoy words: every word
// is read.

// ModelBuckets is the size of the feature space (a power of two): every
// Feature's Key is below it.
const ModelBuckets = 1 << 18

//go:embed model.bin
var modelFile []byte

// Model is a trained definition scorer.
type Model struct {
	Bias      float32
	Threshold float32 // a probability: scores at or above it are findings
	Keys      []uint32
	Weights   []float32

	// index, when set (see buildIndex), finds a key's weight without a
	// search: most features of a definition are in no model bucket.
	index *modelIndex
}

// modelIndex marks the buckets that have a weight, with the number of
// marked buckets before each word of marks: a key's weight is at the rank
// of its bit.
type modelIndex struct {
	marks [ModelBuckets / 64]uint64
	rank  [ModelBuckets / 64]uint32
}

// buildIndex indexes m's keys, when they are the buckets of a model the
// trainer writes (distinct, in order, each below ModelBuckets); weight
// searches the keys of any other.
func (m *Model) buildIndex() {
	x := new(modelIndex)
	for i, k := range m.Keys {
		if k >= ModelBuckets || i > 0 && k <= m.Keys[i-1] {
			return
		}
		x.marks[k/64] |= 1 << (k % 64)
	}
	n := uint32(0)
	for w, bits64 := range x.marks {
		x.rank[w] = n
		n += uint32(bits.OnesCount64(bits64))
	}
	m.index = x
}

const modelMagic = "weir-defmodel-1\n"

// MarshalBinary encodes m as model.bin holds it.
func (m *Model) MarshalBinary() ([]byte, error) {
	if len(m.Keys) != len(m.Weights) || !slices.IsSorted(m.Keys) {
		return nil, errors.New("model: keys and weights differ in length or keys are unsorted")
	}
	b := []byte(modelMagic)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.Bias))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.Threshold))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Keys)))
	for i, k := range m.Keys {
		b = binary.LittleEndian.AppendUint32(b, k)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.Weights[i]))
	}
	return b, nil
}

// UnmarshalBinary decodes model.bin.
func (m *Model) UnmarshalBinary(b []byte) error {
	if len(b) < len(modelMagic)+12 || string(b[:len(modelMagic)]) != modelMagic {
		return errors.New("model: not a weir definition model")
	}
	b = b[len(modelMagic):]
	m.Bias = math.Float32frombits(binary.LittleEndian.Uint32(b))
	m.Threshold = math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
	n := int(binary.LittleEndian.Uint32(b[8:]))
	b = b[12:]
	if len(b) != 8*n {
		return fmt.Errorf("model: %d entries announced, %d bytes follow", n, len(b))
	}
	m.Keys, m.Weights = make([]uint32, n), make([]float32, n)
	for i := range n {
		m.Keys[i] = binary.LittleEndian.Uint32(b[8*i:])
		m.Weights[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8*i+4:]))
	}
	if !slices.IsSorted(m.Keys) {
		return errors.New("model: keys unsorted")
	}
	m.buildIndex()
	return nil
}

// builtinModel is model.bin, decoded on first use so that loading the
// package costs nothing.
var builtinModel = sync.OnceValue(func() *Model {
	m := new(Model)
	if err := m.UnmarshalBinary(modelFile); err != nil {
		// model.bin is built by the trainer and checked by the tests; a
		// broken one scores nothing rather than everything.
		return &Model{Threshold: 2}
	}
	return m
})

// weight is the weight of feature key (0 for a feature not in the model).
func (m *Model) weight(key uint32) float32 {
	if x := m.index; x != nil {
		if key >= ModelBuckets {
			return 0
		}
		w, bit := key/64, uint64(1)<<(key%64)
		if x.marks[w]&bit == 0 {
			return 0
		}
		return m.Weights[x.rank[w]+uint32(bits.OnesCount64(x.marks[w]&(bit-1)))]
	}
	i, ok := slices.BinarySearch(m.Keys, key)
	if !ok {
		return 0
	}
	return m.Weights[i]
}

// Feature is one word or word pair of a definition: its bucket, and the
// text it was read from, for the evidence.
type Feature struct {
	Key  uint32
	Text string
}

// DefinitionFeatures are the distinct features of a tool definition, in
// the order first seen: what the builtin model scores, and what
// bench/poisoning/train trains it on.
func DefinitionFeatures(t Tool) []Feature {
	var out []Feature
	eachFeature(t, decodeField("inputSchema", t.InputSchema), decodeField("outputSchema", t.OutputSchema), func(k uint32, _ string, text func() string) {
		out = append(out, Feature{k, text()})
	})
	return out
}

// eachFeature calls visit once for each distinct feature of a definition,
// with a function that makes its text. Every word is read, however many:
// a cap would let a definition hide its payload behind decoy words.
// where is the field the feature was first read in ("description",
// "inputSchema", "outputSchema").
func eachFeature(t Tool, input, output jsonField, visit func(key uint32, where string, text func() string)) {
	fs := featureSet{seen: seenPool.Get().(*[ModelBuckets / 64]uint64), visit: visit}
	defer fs.release()
	// The name, the title and a description's short first sentence say
	// what the tool is for; a poisoned definition's payload comes after
	// them or in its schema. Leaving them out keeps the scorer from
	// learning what the published proof-of-concepts are (calculators,
	// weather lookups) instead of what they ask.
	fs.where = "description"
	fs.field(pastCover(t.Description))
	for _, sch := range [...]jsonField{input, output} {
		if sch.err == nil && !sch.empty {
			fs.where = sch.name
			fs.schema(sch.v, 0)
		}
	}
}

// featureSet reads a definition's features, each once: seen marks the
// buckets met, touched lists them so that the pooled set is cleared
// cheaply for a short definition.
type featureSet struct {
	seen    *[ModelBuckets / 64]uint64
	touched []uint32
	visit   func(key uint32, where string, text func() string)
	where   string // the field being read
}

var seenPool = sync.Pool{New: func() any { return new([ModelBuckets / 64]uint64) }}

func (fs *featureSet) release() {
	if len(fs.touched) > len(fs.seen)/8 {
		clear(fs.seen[:])
	} else {
		for _, k := range fs.touched {
			fs.seen[k>>6] = 0
		}
	}
	seenPool.Put(fs.seen)
}

// add visits the feature of the words a and b (nil for a single word),
// prefixed with prefix (0 for none), unless it was visited already.
func (fs *featureSet) add(a, b []byte, prefix byte) {
	h := fnvOffset
	if prefix != 0 {
		h = fnv(h, []byte{prefix})
	}
	h = fnv(h, a)
	if b != nil {
		h = fnv(fnv(h, []byte{' '}), b)
	}
	k := h & (ModelBuckets - 1)
	if fs.seen[k>>6]&(1<<(k&63)) != 0 {
		return
	}
	fs.seen[k>>6] |= 1 << (k & 63)
	fs.touched = append(fs.touched, k)
	fs.visit(k, fs.where, func() string {
		text := string(a)
		if prefix != 0 {
			text = string(prefix) + text
		}
		if b != nil {
			text += " " + string(b)
		}
		return text
	})
}

// schema reads a schema's strings (descriptions, enum values, examples) as
// fields. Its keys are parameter names: a toy tool's "a" and "b" or a real
// one's "path", which say what the tool takes, not what it asks (the
// exfil-parameter rules read names), and the values of "type" are
// vocabulary.
func (fs *featureSet) schema(v any, depth int) {
	if depth > MaxSchemaDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fs.schema(x[k], depth+1)
		}
	case []any:
		for _, e := range x {
			fs.schema(e, depth+1)
		}
	case string:
		if !schemaTypes[x] {
			fs.field(x)
		}
	}
}

// MaxSchemaDepth bounds how deep the scorer reads a schema.
const MaxSchemaDepth = 32

// schemaTypes are the values of a schema's "type": vocabulary, not text.
var schemaTypes = map[string]bool{"object": true, "string": true, "integer": true, "number": true, "boolean": true, "array": true, "null": true}

// field adds the words and word pairs of one text. Words are runs of
// letters and digits, lowercased, split at camelCase and snake_case
// joints; a word right after "<" or "[" is also read as a tag ("<important"),
// and "~/" and "://" are words of their own.
func (fs *featureSet) field(s string) {
	var cur, prev []byte // the word being read (lowercased), and the one before
	word := func(w []byte) {
		stop := modelStopWords[string(w)]
		if !stop {
			fs.add(w, nil, 0)
		}
		if len(prev) > 0 && !(stop && modelStopWords[string(prev)]) {
			fs.add(prev, w, 0)
		}
		prev = append(prev[:0], w...)
	}
	var last rune
	tag := false
	flush := func() {
		if len(cur) == 0 {
			return
		}
		w := cur
		cur = cur[:0]
		if len(w) < 2 {
			// "a", "b", "x": parameter names of toy tools, not words
			return
		}
		if tag {
			fs.add(w, nil, '<')
		}
		word(w)
	}
	skip := 0 // the end of a URL being skipped
	for i, r := range s {
		if i < skip {
			continue
		}
		if r == utf8.RuneError {
			last = r
			continue
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(last) {
				flush()
				tag = false
			}
			if len(cur) == 0 {
				tag = last == '<' || last == '['
			}
			cur = utf8.AppendRune(cur, unicode.ToLower(r))
		default:
			flush()
			tag = false
			switch {
			case r == '~' && strings.HasPrefix(s[i:], "~/"):
				word([]byte("~/"))
			case r == ':' && strings.HasPrefix(s[i:], "://"):
				// A URL is one word: its host and path are names, which
				// say nothing of what the text asks.
				word([]byte("://"))
				skip = i + 3 + urlLength(s[i+3:])
			}
		}
		last = r
	}
	flush()
}

// modelStopWords are words every kind of description uses: alone, or in
// pairs of them ("this tool", "you can"), they tell the model how a text
// is phrased, not what it asks, and a scorer that leaned on them would flag
// any plainly written definition.
var modelStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the this that these those it its is are was were be been being am
	and or but if then than so as of to in on at by for from with without into onto about over under
	you your yours we our us i me my he she they them their his her
	do does did done can could will would shall should may might must
	not no yes all any each every some such other more most only also just
	tool tools function functions call calls called calling`) {
		m[w] = true
	}
	return m
}()

// coverWords is the most words a description's first sentence may have
// to be read as its cover: a longer one may carry the payload itself.
const coverWords = 12

// pastCover is a description past its first sentence (up to the first
// line break, or the first '.', '!' or '?' followed by a space) when that
// sentence is short enough to be only what the tool is for; otherwise the
// whole description.
func pastCover(s string) string {
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || (s[i] == '.' || s[i] == '!' || s[i] == '?') && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\r') {
			end = i
			break
		}
	}
	if len(strings.Fields(s[:end])) > coverWords {
		return s
	}
	if end == len(s) {
		return ""
	}
	return s[end+1:]
}

// urlLength is how many bytes of s belong to the URL it starts.
func urlLength(s string) int {
	for i, r := range s {
		if unicode.IsSpace(r) || strings.ContainsRune("\"'`<>()[]{}", r) {
			return i
		}
	}
	return len(s)
}

// FNV-1a, over the bytes of a feature's words.
const fnvOffset = uint32(2166136261)

func fnv(h uint32, b []byte) uint32 {
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// score is the model's probability that a definition is poisoned, the
// texts of the (at most three) features that pushed it up most, strongest
// first, and the field the strongest was read in.
func (m *Model) score(t Tool, input, output jsonField) (p float64, top []string, where string) {
	z := float64(m.Bias)
	var best [3]struct {
		w           float32
		text, where string
	}
	eachFeature(t, input, output, func(k uint32, at string, text func() string) {
		w := m.weight(k)
		z += float64(w)
		if w <= best[len(best)-1].w {
			return
		}
		i := len(best) - 1
		for i > 0 && w > best[i-1].w {
			best[i] = best[i-1]
			i--
		}
		best[i].w, best[i].text, best[i].where = w, text(), at
	})
	for _, b := range best {
		if b.w > 0 {
			top = append(top, b.text)
		}
	}
	return 1 / (1 + math.Exp(-z)), top, best[0].where
}

// modelFinding scores a definition the rules found no sign of poisoning
// in (nothing of Medium or above): a Medium finding when the builtin model
// rates it poisoned, with the words that weighed most as its evidence.
// It corroborates nothing, so on its own it warns and never withholds.
func modelFinding(t Tool, input, output jsonField, raw []rawFinding) []rawFinding {
	for _, f := range raw {
		if f.Severity >= Medium {
			return nil
		}
	}
	m := builtinModel()
	p, top, where := m.score(t, input, output)
	if p < float64(m.Threshold) {
		return nil
	}
	words := make([]string, len(top))
	for i, w := range top {
		words[i] = strconv.Quote(w)
	}
	ev := visible(strings.Join(words, ", "), false)
	return []rawFinding{{Finding: Finding{Detector: detModel, Severity: Medium, Field: where, Evidence: ev,
		Message: fmt.Sprintf("Worded like published poisoned tool definitions (score %.2f, threshold %.2f; the words that weigh most: %s): no rule names it, so read the definition before trusting the tool.",
			p, m.Threshold, strings.Join(words, ", "))}}}
}
