package fingerprint

import (
	"bytes"
	"fmt"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func testHasher(t testing.TB, seed byte) *Hasher {
	t.Helper()
	key := bytes.Repeat([]byte{seed}, 32)
	h, err := NewHasher(key)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// refPrints is the obviously-correct reference: normalise, hash each k-gram
// from scratch with big integers, take the minimum of every window by
// scanning it, finalise the minima.
func refPrints(h *Hasher, text string) []uint64 {
	norm := Normalize(nil, text)
	if len(norm) < K {
		return nil
	}
	p := new(big.Int).SetUint64(mersenne61)
	b := new(big.Int).SetUint64(h.base)
	var hs []uint64
	for i := 0; i+K <= len(norm); i++ {
		acc := new(big.Int)
		for _, c := range norm[i : i+K] {
			acc.Mul(acc, b)
			acc.Add(acc, big.NewInt(int64(c)))
			acc.Mod(acc, p)
		}
		hs = append(hs, acc.Uint64())
	}
	var out []uint64
	if len(hs) < W {
		return []uint64{h.finalise(slices.Min(hs))}
	}
	for s := 0; s+W <= len(hs); s++ {
		out = append(out, h.finalise(slices.Min(hs[s:s+W])))
	}
	return SortUnique(out)
}

func printSet(h *Hasher, text string) []uint64 {
	return SortUnique(h.Prints(nil, text))
}

func TestNewHasherKeyLength(t *testing.T) {
	for _, n := range []int{0, 1, 15} {
		if _, err := NewHasher(make([]byte, n)); err == nil {
			t.Errorf("NewHasher(%d-byte key) succeeded", n)
		}
	}
	for _, n := range []int{16, 32, 64} {
		if _, err := NewHasher(make([]byte, n)); err != nil {
			t.Errorf("NewHasher(%d-byte key): %v", n, err)
		}
	}
}

func TestPrintsShort(t *testing.T) {
	h := testHasher(t, 1)
	tests := []struct {
		name string
		text string
		want int // number of distinct prints, -1 for "at least one"
	}{
		{"empty", "", 0},
		{"punctuation only", strings.Repeat("!? ,.", 50), 0},
		{"K-1 bytes", strings.Repeat("a", K-1), 0},
		{"K bytes", "abcdefghijklmnopqrstuvwx", 1},
		{"K bytes with noise", "ABC def-GHI jkl.MNO pqr/STU vwx!!", 1},
		{"K+W-2 bytes is one short window", "abcdefghijklmnopqrstuvwxyz0123456", 1},
		{"long", strings.Repeat("the quick brown fox jumps over the lazy dog ", 20), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := printSet(h, tt.text)
			if tt.want >= 0 && len(got) != tt.want || tt.want < 0 && len(got) == 0 {
				t.Errorf("got %d prints, want %d", len(got), tt.want)
			}
			if ref := refPrints(h, tt.text); !slices.Equal(got, ref) {
				t.Errorf("got %x, reference %x", got, ref)
			}
		})
	}
}

// genText draws text from a random alphabet. Small alphabets make repeated
// k-grams and equal window minima common, which is where winnowing bugs hide.
func genText(t *rapid.T, label string, alphabet []rune, minLen, maxLen int) string {
	rs := rapid.SliceOfN(rapid.SampledFrom(alphabet), minLen, maxLen).Draw(t, label)
	return string(rs)
}

// genLong draws a long text cheaply: rapid draws only a seed and a length.
func genLong(t *rapid.T, alphabet []rune, minLen, maxLen int) string {
	seed := rapid.Uint64().Draw(t, "seed")
	n := rapid.IntRange(minLen, maxLen).Draw(t, "len")
	r := rand.New(rand.NewPCG(seed, 0))
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(rs)
}

var alphabets = [][]rune{
	[]rune("ab"),
	[]rune("aB "),
	[]rune("abc1"),
	[]rune("abcdefghijklmnopqrstuvwxyz "),
	[]rune("aA.,\"{}:0 9"),
	[]rune("aéÉ漢字ßẞ İı\x80\xff"),
	[]rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.;:'\"{}[]()\n\t-_"),
}

func drawAlphabet(t *rapid.T) []rune {
	return rapid.SampledFrom(alphabets).Draw(t, "alphabet")
}

func drawHasher(t *rapid.T) *Hasher {
	key := rapid.SliceOfN(rapid.Byte(), 16, 64).Draw(t, "key")
	h, err := NewHasher(key)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPrintsMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := drawHasher(t)
		text := genText(t, "text", drawAlphabet(t), 0, 600)
		got := printSet(h, text)
		want := refPrints(h, text)
		if !slices.Equal(got, want) {
			t.Fatalf("prints differ from reference:\n got %x\nwant %x", got, want)
		}
	})
}

// TestPrintsMatchesReferenceAcrossBlocks runs texts longer than a block so
// the carries between blocks are checked against the reference too.
func TestPrintsMatchesReferenceAcrossBlocks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := drawHasher(t)
		text := genLong(t, drawAlphabet(t), blk-100, 3*blk+100)
		if got, want := printSet(h, text), refPrints(h, text); !slices.Equal(got, want) {
			t.Fatalf("prints differ from reference (%d vs %d prints)", len(got), len(want))
		}
	})
}

// TestPrintsSharedRun checks the winnowing guarantee: a run of at least
// K+W−1 normalised bytes shared by two texts yields a shared print.
func TestPrintsSharedRun(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := drawHasher(t)
		alpha := drawAlphabet(t)
		shared := genText(t, "shared", alpha, K+W-1, 400)
		if n := len(Normalize(nil, shared)); n < K+W-1 {
			t.Skip("shared run normalises to", n, "bytes")
		}
		a := genText(t, "a1", alpha, 0, 300) + shared + genText(t, "a2", alpha, 0, 300)
		b := genText(t, "b1", alpha, 0, 300) + shared + genText(t, "b2", alpha, 0, 300)
		pa, pb := printSet(h, a), printSet(h, b)
		for _, v := range pa {
			if _, ok := slices.BinarySearch(pb, v); ok {
				return
			}
		}
		t.Fatalf("no shared print: %d and %d prints", len(pa), len(pb))
	})
}

func TestPrintsDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOfN(rapid.Byte(), 16, 64).Draw(t, "key")
		h1, _ := NewHasher(key)
		h2, _ := NewHasher(bytes.Clone(key))
		text := genLong(t, drawAlphabet(t), 0, 3*blk)
		a := h1.Prints(nil, text)
		b := h2.Prints(nil, text)
		if !slices.Equal(a, b) {
			t.Fatal("same key and text gave different prints")
		}
		// Appending keeps what dst held.
		c := h1.Prints([]uint64{7}, text)
		if c[0] != 7 || !slices.Equal(c[1:], a) {
			t.Fatal("Prints did not append to dst")
		}
	})
}

func TestPrintsKeyed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k1 := rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "k1")
		k2 := rapid.SliceOfN(rapid.Byte(), 32, 32).Filter(func(k []byte) bool { return !bytes.Equal(k, k1) }).Draw(t, "k2")
		h1, _ := NewHasher(k1)
		h2, _ := NewHasher(k2)
		text := genText(t, "text", alphabets[len(alphabets)-1], K, 2000)
		a, b := printSet(h1, text), printSet(h2, text)
		if len(a) == 0 {
			return
		}
		for _, v := range a {
			if _, ok := slices.BinarySearch(b, v); ok {
				t.Fatalf("print %x under both keys", v)
			}
		}
	})
}

// TestNormalizeAllRunes checks, for every rune, that normalisation keeps
// exactly letters and digits and is idempotent, which FuzzPrints relies on.
func TestNormalizeAllRunes(t *testing.T) {
	var buf, again []byte
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		buf = Normalize(buf[:0], s)
		keep := unicode.IsLetter(r) || unicode.IsDigit(r)
		if keep != (len(buf) > 0) {
			t.Fatalf("%U: kept=%v", r, len(buf) > 0)
		}
		again = Normalize(again[:0], string(buf))
		if !bytes.Equal(buf, again) {
			t.Fatalf("%U: Normalize not idempotent: %q then %q", r, buf, again)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Hello, World!", "helloworld"},
		{`{"user":"Alice","id":42}`, "useraliceid42"},
		{"Ünïcödé ÄÖÜ ß", "ünïcödéäöüß"},
		{"invalid \xff\xfe bytes", "invalidbytes"},
		{"日本語 テキスト", "日本語テキスト"},
		{"١٢٣ digits", "١٢٣digits"},
		{"KELVIN \u212A", "kelvink"},
	}
	for _, tt := range tests {
		if got := string(Normalize(nil, tt.in)); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSortUnique(t *testing.T) {
	tests := []struct{ in, want []uint64 }{
		{nil, nil},
		{[]uint64{3, 1, 2, 3, 1}, []uint64{1, 2, 3}},
		{[]uint64{5, 5, 5}, []uint64{5}},
	}
	for _, tt := range tests {
		if got := SortUnique(slices.Clone(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("SortUnique(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestSortUniqueRadix: at every length around the radix threshold, and on
// keys that share most of their digits (the passes that move nothing are
// skipped), SortUnique agrees with sorting by comparison.
func TestSortUniqueRadix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 3*radixMin).Draw(t, "n")
		mask := rapid.SampledFrom([]uint64{^uint64(0), 0xff, 0xffff00000000, 1 << 63, 0x7ff << 11}).Draw(t, "mask")
		seed := rapid.Uint64().Draw(t, "seed")
		in := make([]uint64, n)
		x := seed
		for i := range in {
			x = x*6364136223846793005 + 1442695040888963407
			in[i] = x & mask
		}
		want := slices.Compact(slices.Sorted(slices.Values(in)))
		if got := SortUnique(slices.Clone(in)); !slices.Equal(got, want) {
			t.Fatalf("SortUnique of %d keys (mask %x) differs from a comparison sort", n, mask)
		}
	})
}

func BenchmarkSortUnique(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 13, 1 << 16} {
		in := make([]uint64, n)
		x := uint64(1)
		for i := range in {
			x = x*6364136223846793005 + 1442695040888963407
			in[i] = x
		}
		buf := make([]uint64, n)
		for _, v := range []struct {
			name string
			sort func([]uint64) []uint64
		}{{"weir", SortUnique}, {"slices", func(s []uint64) []uint64 { slices.Sort(s); return slices.Compact(s) }}} {
			b.Run(fmt.Sprintf("%s/%d", v.name, n), func(b *testing.B) {
				for b.Loop() {
					copy(buf, in)
					v.sort(buf)
				}
			})
		}
	}
}

func TestDigestAndKeyed(t *testing.T) {
	h1 := testHasher(t, 1)
	h2 := testHasher(t, 2)
	if h1.Digest("sk_live_abc") != testHasher(t, 1).Digest("sk_live_abc") {
		t.Error("Digest not deterministic")
	}
	if h1.Digest("sk_live_abc") == h1.Digest("sk_live_abd") {
		t.Error("Digest collides on different tokens")
	}
	if h1.Digest("sk_live_abc") == h2.Digest("sk_live_abc") {
		t.Error("Digest not keyed")
	}
	k := h1.Keyed("value")
	if len(k) != 16 || strings.Trim(k, "0123456789abcdef") != "" {
		t.Errorf("Keyed = %q, want 16 hex chars", k)
	}
	if k == h2.Keyed("value") || k == h1.Keyed("other") {
		t.Error("Keyed not keyed or collides")
	}
	// Digests and audit hashes use different subkeys.
	if fmt.Sprintf("%016x", h1.Digest("value")) == k {
		t.Error("Digest and Keyed share a key")
	}
}

func FuzzPrints(f *testing.F) {
	f.Add("")
	f.Add("The quick brown fox jumps over the lazy dog, again and again and again.")
	f.Add(`{"name":"Ünïcödé","data":[1,2,3],"note":"\u00e9\u212a"}`)
	f.Add(strings.Repeat("ab", 200))
	f.Add("\xff\xfe\xfd" + strings.Repeat("İı", 40))
	h := testHasher(f, 3)
	f.Fuzz(func(t *testing.T, text string) {
		a := h.Prints(nil, text)
		if b := h.Prints(nil, text); !slices.Equal(a, b) {
			t.Fatal("not deterministic")
		}
		norm := string(Normalize(nil, text))
		if b := h.Prints(nil, norm); !slices.Equal(a, b) {
			t.Fatalf("Prints(text) != Prints(Normalize(text))")
		}
		if len(text) < 4096 {
			if got, want := SortUnique(a), refPrints(h, text); !slices.Equal(got, want) {
				t.Fatalf("differs from reference")
			}
		}
	})
}

// benchText makes deterministic text that looks like what tool results
// carry: English prose and JSON records, mixed.
func benchText(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the of and to in is you that it he was for on are as with his they
		at be this have from or one had by word but not what all were we when your can said there
		use an each which she do how their if will up other about out many then them these so some
		her would make like him into time has look two more write go see number no way could people
		my than first water been call who oil its now find long down day did get come made may part
		account invoice customer balance payment meeting schedule report quarterly revenue project
		deadline summary attached please review confidential internal password address phone`)
	var sb strings.Builder
	for sb.Len() < n {
		if r.IntN(3) == 0 {
			fmt.Fprintf(&sb, `{"id":%d,"name":"%s %s","email":"%s@example.com","amount":%d.%02d,"tags":["%s","%s"]},`+"\n",
				r.IntN(100000), words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))],
				r.IntN(10000), r.IntN(100), words[r.IntN(len(words))], words[r.IntN(len(words))])
			continue
		}
		for range 8 + r.IntN(12) {
			w := words[r.IntN(len(words))]
			if r.IntN(10) == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			sb.WriteString(w)
			sb.WriteByte(' ')
		}
		sb.WriteString(". ")
	}
	return sb.String()[:n]
}

func BenchmarkPrints(b *testing.B) {
	h := testHasher(b, 1)
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		text := benchText(size)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			var dst []uint64
			done := cpuMeter(b)
			for b.Loop() {
				dst = h.Prints(dst[:0], text)
			}
			done(len(text))
		})
	}
}

func BenchmarkNormalize(b *testing.B) {
	text := benchText(64 << 10)
	b.SetBytes(int64(len(text)))
	var dst []byte
	done := cpuMeter(b)
	for b.Loop() {
		dst = Normalize(dst[:0], text)
	}
	done(len(text))
}

// cpuMeter pins the benchmark to its thread and returns a function that
// reports MB per CPU-second of that thread ("cpuMB/s"), which stays
// meaningful when other processes compete for the machine.
func cpuMeter(b *testing.B) func(bytesPerOp int) {
	runtime.LockOSThread()
	start := threadCPU()
	return func(bytesPerOp int) {
		cpu := threadCPU() - start
		runtime.UnlockOSThread()
		if cpu > 0 {
			b.ReportMetric(float64(b.N)*float64(bytesPerOp)/cpu.Seconds()/1e6, "cpuMB/s")
		}
	}
}

// TestHasherConcurrent shares one Hasher between goroutines; run with -race.
func TestHasherConcurrent(t *testing.T) {
	h := testHasher(t, 4)
	text := benchText(10 << 10)
	want := h.Prints(nil, text)
	wantDigest, wantKeyed := h.Digest("sk_live_abc"), h.Keyed("abc")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := h.Prints(nil, text); !slices.Equal(got, want) {
					t.Error("Prints differs under concurrency")
					return
				}
				if h.Digest("sk_live_abc") != wantDigest || h.Keyed("abc") != wantKeyed {
					t.Error("Digest or Keyed differs under concurrency")
					return
				}
			}
		})
	}
	wg.Wait()
}
