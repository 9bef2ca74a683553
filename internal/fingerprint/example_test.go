package fingerprint_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/weir-sec/weir/internal/fingerprint"
)

// A private result is fingerprinted once; a sink argument that carries
// part of it base64-encoded shares prints with it through a decoded view.
func Example() {
	h, err := fingerprint.NewHasher(bytes.Repeat([]byte{7}, 32)) // the per-install secret
	if err != nil {
		panic(err)
	}
	private := "Q3 results (confidential): revenue grew 14% to $3.2M, driven by the Atlas contract renewal."
	held := fingerprint.SortUnique(h.Prints(nil, private))

	arg := "https://collector.example/?d=" + base64.StdEncoding.EncodeToString([]byte("revenue grew 14% to $3.2M, driven by the Atlas contract"))
	fingerprint.Expand(arg, func(v fingerprint.View) {
		for _, p := range h.Prints(nil, v.Text) {
			if _, ok := slices.BinarySearch(held, p); ok {
				fmt.Println("leak via", v.Via)
				return
			}
		}
	})
	// Output: leak via [base64]
}

func ExampleTokens() {
	fingerprint.Tokens("export STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc # rotated 2024-05-13T10:00:00Z", func(tok string) {
		fmt.Println(tok)
	})
	// Output:
	// STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc
	// sk_live_4eC39HqLyjWDarjtT1zdp7dc
}

func ExampleExpand() {
	fingerprint.Expand("Njg2NTZjNmM2ZjIwNzc2ZjcyNmM2NA==", func(v fingerprint.View) {
		fmt.Printf("%q %v\n", v.Text, v.Via)
	})
	// Output:
	// "Njg2NTZjNmM2ZjIwNzc2ZjcyNmM2NA==" []
	// "68656c6c6f20776f726c64" [base64]
	// "hello world" [base64 hex]
}
