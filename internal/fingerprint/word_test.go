package fingerprint

import "testing"

// TestWord: the hash depends on the kind, on every part and on where the
// parts end, not only on their bytes; the same key gives the same hash,
// another key another.
func TestWord(t *testing.T) {
	h := testHasher(t, 1)
	cases := []struct {
		kind  byte
		parts []string
	}{
		{'w', nil}, {'w', []string{""}}, {'w', []string{"", ""}}, {'n', []string{""}},
		{'w', []string{"13"}}, {'n', []string{"13"}}, {'w', []string{"ab", "c"}}, {'w', []string{"a", "bc"}},
		{'w', []string{"abc"}}, {'w', []string{"ab\x00c"}}, {'w', []string{"c", "ab"}}, {'w', []string{"\xff"}},
	}
	seen := map[uint64]int{}
	for i, c := range cases {
		d := h.Word(c.kind, c.parts...)
		if j, ok := seen[d]; ok {
			t.Errorf("%c %q and %c %q hash alike", c.kind, c.parts, cases[j].kind, cases[j].parts)
		}
		seen[d] = i
		if testHasher(t, 1).Word(c.kind, c.parts...) != d {
			t.Errorf("%c %q: another Hasher with the same key hashes it otherwise", c.kind, c.parts)
		}
		if testHasher(t, 2).Word(c.kind, c.parts...) == d {
			t.Errorf("%c %q: another key hashes it alike", c.kind, c.parts)
		}
	}
}
