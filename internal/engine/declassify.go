package engine

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// Declassification is what a `tools:` entry's declassify did to a result:
// it validated, and entered the session without Dropped, or it did not,
// and entered as tainted as its tool's labels make it, for the reason in
// Why.
type Declassification struct {
	// Schema is the schema's registry name, or "inline".
	Schema string
	// Dropped are the labels the result entered without; none when it did
	// not validate.
	Dropped flow.Labels
	// Why says why a result did not validate: where and which keyword,
	// never a value.
	Why string
}

// String is the audit log's account of it.
func (dc *Declassification) String() string {
	if dc.Dropped != 0 {
		return fmt.Sprintf("declassified by schema %s: entered without %s", dc.Schema, dc.Dropped)
	}
	return fmt.Sprintf("not declassified by schema %s: %s", dc.Schema, dc.Why)
}

// ResultLabels are the labels a result of a tool labelled l entered the
// session with, given its arrival decision d: l without what a
// declassification dropped.
func (d *Decision) ResultLabels(l flow.Labels) flow.Labels {
	if d.Declassify != nil {
		return l &^ d.Declassify.Dropped
	}
	return l
}

// declassify checks a result against a declassify schema. Everything a
// model reads in it must validate: its structuredContent, and every text
// content item, read as JSON when it is JSON and as a string otherwise (a
// server may send a sentence in the text next to a number in the
// structured content, and the model reads the sentence). Error results and
// items other than text (images, resources, links) are never
// declassified: their text is not what the schema describes.
func declassify(dc *policy.Declassify, rd resultReading) *Declassification {
	out := &Declassification{Schema: dc.Schema}
	check := func(what string, v any) bool {
		if err := dc.Check(v); err != nil {
			out.Why = what + ": " + err.Error()
			return false
		}
		return true
	}
	switch {
	case rd.isError:
		out.Why = "an error result is never declassified"
		return out
	case rd.nonText > 0:
		out.Why = "the result has content that is not text"
		return out
	}
	total := len(rd.structured)
	for _, t := range rd.texts {
		total += len(t.text)
	}
	if total > policy.MaxDeclassifyBytes {
		out.Why = fmt.Sprintf("the result is larger than %d bytes", policy.MaxDeclassifyBytes)
		return out
	}
	if rd.structured != nil {
		v, err := policy.DecodeInstance(rd.structured)
		if err != nil {
			out.Why = "structuredContent: " + err.Error()
			return out
		}
		if !check("structuredContent", v) {
			return out
		}
	}
	for _, t := range rd.texts {
		if rd.structured != nil && strings.TrimSpace(t.text) == string(bytes.TrimSpace(rd.structured)) {
			continue // the structured content as text, the usual case: validated once
		}
		var v any = t.text
		if j, err := policy.DecodeInstance([]byte(t.text)); err == nil {
			v = j
		}
		if !check(t.field, v) {
			return out
		}
	}
	out.Dropped = dc.Drop
	return out
}
