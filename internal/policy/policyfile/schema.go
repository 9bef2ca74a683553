package policyfile

import (
	_ "embed"
	"slices"
)

// schemaJSON is the JSON Schema (draft 2020-12) of a policy file.
//
//go:embed policy.schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of the policy file format,
// as `weir policy schema` prints it, so that editors can complete and check
// a policy. The loader stays the authority: the schema cannot check glob
// syntax, regular expressions, CEL or config keys, and accepts some files
// [Parse] refuses; it never refuses a file Parse accepts.
func Schema() []byte { return slices.Clone(schemaJSON) }
