package audit_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/weir-sec/weir/internal/audit"
)

// The relay records a call's arguments by shape and keyed hashes only.
func ExampleShape() {
	keyed := func(v string) string {
		m := hmac.New(sha256.New, []byte("per-install key"))
		m.Write([]byte(v))
		return hex.EncodeToString(m.Sum(nil))[:12]
	}
	args := json.RawMessage(`{"to":"alice@example.com","subject":"Q3","body":"the numbers","cc":["bob@example.com"],"urgent":true}`)
	shape, hashes, err := audit.Shape(args, keyed)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(shape))
	fmt.Println(slices.Sorted(maps.Keys(hashes)))
	// Output:
	// {"to":"string(17)","subject":"string(2)","body":"string(11)","cc":["string(15)"],"urgent":"bool"}
	// [$.body $.cc[0] $.subject $.to]
}
