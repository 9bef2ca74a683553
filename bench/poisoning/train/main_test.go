package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

var root = filepath.Join("..", "..", "..")

// TestCommittedModel retrains the model from the committed data with the
// committed settings: the bytes must be internal/detect/model.bin's (the
// model shipped is the one this program makes), and its out-of-split
// numbers must hold: a change of features or data that makes the scorer
// worse on splits it never saw fails here.
func TestCommittedModel(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 17 models; skipped with -short")
	}
	defs, err := load(filepath.Join(root, "testdata", "poisoning"), filepath.Join(root, "testdata", "catalogues"))
	if err != nil {
		t.Fatal(err)
	}
	oos := crossValidate(defs, defaultL2)
	threshold, _, _ := thresholdFor(oos, defaultMaxFP)
	all, poc, _, benign := tally(oos, "all", threshold)
	t.Logf("threshold %.4f: caught %d/%d (poc %d/%d), benign flagged %d/%d", threshold, all[0], all[1], poc[0], poc[1], benign[0], benign[1])
	// The floors sit a little under what the committed data gives (70.0%
	// and 70.5%: poisoning heldout7, whose study's and benchmark's
	// payloads read much like benign definitions, and the catalogues'
	// heldout10, whose benign ones read like instructions, took recall
	// down from 77.3%).
	if r := float64(all[0]) / float64(all[1]); r < 0.68 {
		t.Errorf("out-of-split recall %.3f, want ≥ 0.68", r)
	}
	if r := float64(poc[0]) / float64(poc[1]); r < 0.68 {
		t.Errorf("out-of-split proof-of-concept recall %.3f, want ≥ 0.68", r)
	}
	var dil [2]int
	for _, x := range oos {
		if x.d.poisoned {
			dil[0] += b2i(x.diluted >= threshold)
			dil[1]++
		}
	}
	if r := float64(dil[0]) / float64(dil[1]); r < 0.55 {
		t.Errorf("out-of-split recall of payloads diluted with prose %.3f, want ≥ 0.55", r)
	}
	if r := float64(benign[0]) / float64(benign[1]); r > 0.002 {
		t.Errorf("out-of-split benign flagged %.4f, want ≤ 0.002", r)
	}
	model := train(defs, defaultL2, threshold)
	got, err := model.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "internal", "detect", "model.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("internal/detect/model.bin is not what the committed data trains (%d bytes, retrained %d): run go run ./bench/poisoning/train", len(want), len(got))
	}
}
