package fingerprint

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func tokenSet(text string) []string {
	var got []string
	Tokens(text, func(tok string) { got = append(got, tok) })
	slices.Sort(got)
	return slices.Compact(got)
}

func TestTokens(t *testing.T) {
	const (
		stripe = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
		awsID  = "AKIAIOSFODNN7EXAMPLE"
		awsKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
		ghp    = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
		jwt    = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
		visa   = "4111111111111111"
		gbIBAN = "GB29NWBK60161331926819"
	)
	tests := []struct {
		name string
		text string
		want []string
	}{
		// Secrets.
		{"aws access key id", "aws_access_key_id = " + awsID, []string{awsID}},
		{"aws secret key with slashes", "aws_secret_access_key=" + awsKey, []string{"aws_secret_access_key=" + awsKey, awsKey}},
		{"aws keys in json", `{"AccessKeyId":"` + awsID + `","SecretAccessKey":"` + awsKey + `"}`, []string{awsID, awsKey}},
		{"github token", "export GITHUB_TOKEN=" + ghp, []string{"GITHUB_TOKEN=" + ghp, ghp}},
		{"stripe key assignment", "api_key=" + stripe, []string{"api_key=" + stripe, stripe}},
		{"stripe key in a url query", "https://api.example.com/v1/charges?api_key=" + stripe + "&limit=10", []string{stripe}},
		{"stripe key in prose", "The key is " + stripe + ".", []string{stripe}},
		{"password with trailing punctuation", "My password is Tr0ub4dor&3x!", []string{"Tr0ub4dor&3x"}},
		{"password assignment keeps &", "password=Tr0ub4dor&3x", []string{"Tr0ub4dor&3x", "password=Tr0ub4dor&3x"}},
		{"password in json", `{"password": "c0rrect-h0rse-battery"}`, []string{"c0rrect-h0rse-battery"}},
		{"bearer jwt", "Authorization: Bearer " + jwt, []string{jwt}},
		{"sha-1 digest", "sha1 58e6b3a414a1e090dfc6029add0f3555ccba127f", []string{"58e6b3a414a1e090dfc6029add0f3555ccba127f"}},
		{"low-entropy hex (3.46 bits) is not a token", "commit 3f786850e387550fdab836ed7c6dc3d5c8cbd6e5", nil},

		// Account and card numbers.
		{"iban-like us account", "Account: US133000000121212121212", []string{"US133000000121212121212"}},
		{"iban compact", "IBAN " + gbIBAN, []string{gbIBAN}},
		{"iban grouped", "Pay to GB29 NWBK 6016 1331 9268 19 by Friday", []string{gbIBAN}},
		{"visa test card", "card: " + visa + " exp 12/29", []string{visa}},
		{"visa grouped by dashes", "card 4111-1111-1111-1111", []string{visa}},
		{"visa grouped by spaces", "card 4111 1111 1111 1111, cvc 123", []string{visa}},
		{"amex grouped", "amex 3782 822463 10005", []string{"378282246310005"}},
		{"sixteen digits failing luhn", "ref 4111111111111112", nil},

		// Identifiers.
		{"uuid", "id 123e4567-e89b-12d3-a456-426614174000", []string{"123e4567-e89b-12d3-a456-426614174000"}},
		{"uuid uppercase is canonical", "ID 123E4567-E89B-12D3-A456-426614174000", []string{"123e4567-e89b-12d3-a456-426614174000"}},
		{"uuid of digits", "12345678-1234-1234-1234-123456789012", []string{"12345678-1234-1234-1234-123456789012"}},

		// Things that are not tokens.
		{"plain sentence", "The quarterly meeting has been rescheduled to Thursday afternoon.", nil},
		{"sentence with long words", "Please review the internationalization documentation before tomorrow's meeting!", nil},
		{"hyphenated name", "Well-Known-Name and my-project-name-here and snake_case_identifier", nil},
		{"product, version and room names", "iPhone-15-Pro v1.2.3-beta.4 nginx:1.25.3-alpine Meeting-Room-4B", nil},
		{"leetspeak passphrase is a token", "c0rrect-h0rse-battery-staple", []string{"c0rrect-h0rse-battery-staple"}},
		{"timestamp", "created_at: 2024-05-13T10:00:00Z", nil},
		{"timestamp with fraction and zone", "2024-05-13T10:00:00.123+02:00 and 20240513T100000Z", nil},
		{"time and date", "at 10:00:00.000000 on 13/05/2024", nil},
		{"phone number", "call +1-555-010-0199", nil},
		{"unix path", "/home/alice/Documents/Q3-Report-2024.pdf", nil},
		{"windows path", `C:\Users\alice\AppData\Local\Temp\IMG_20240513_101500.jpg`, nil},
		{"relative path", "internal/fingerprint/prints_test.go", nil},
		{"url", "https://example.com/path/to/resource?query=value", nil},
		{"email", "write to alice.smith@example.com or mailto:bob.jones@example.org", nil},
		{"short values", "pin=1234 user=alice id=42 code: X7-b9", nil},
		{"too long", "blob " + strings.Repeat("aB3+", 40), nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if got := tokenSet(tt.text); !slices.Equal(got, want) {
				t.Errorf("Tokens(%q)\n got %q\nwant %q", tt.text, got, want)
			}
		})
	}
}

// TestTokensSymmetric checks that a secret found on its own is found in
// every context a private result or a sink argument may carry it in.
func TestTokensSymmetric(t *testing.T) {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+/!@#$%^*~.&?"
	rapid.Check(t, func(t *rapid.T) {
		secret := rapid.StringOfN(rapid.SampledFrom([]rune(chars)), 12, 60, -1).Draw(t, "secret")
		alone := tokenSet(secret)
		if !slices.Contains(alone, secret) {
			t.Skip("not a token on its own")
		}
		contexts := []string{
			"KEY=" + secret,
			"password: " + secret,
			`{"token": "` + secret + `"}`,
			"my token is " + secret + " thanks",
			"(" + secret + ")",
			"'" + secret + "'",
			"token:" + secret + "\n",
		}
		if !strings.ContainsAny(secret, "&?=:") {
			contexts = append(contexts, "https://evil.example/c?a=1&k="+secret+"&z=2")
		}
		for _, c := range contexts {
			if got := tokenSet(c); !slices.Contains(got, secret) {
				t.Fatalf("context %q: tokens %q lack %q", c, got, secret)
			}
		}
	})
}

func TestTokensDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.String().Draw(t, "text")
		var a, b []string
		Tokens(text, func(s string) { a = append(a, s) })
		Tokens(text, func(s string) { b = append(b, s) })
		if !slices.Equal(a, b) {
			t.Fatal("not deterministic")
		}
		for _, tok := range a {
			if len(tok) < minToken || len(tok) > maxToken {
				t.Fatalf("token %q outside length bounds", tok)
			}
		}
	})
}

func FuzzTokens(f *testing.F) {
	f.Add("api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc&x=1")
	f.Add("GB29 NWBK 6016 1331 9268 19")
	f.Add("4111-1111-1111-1111 2024-05-13T10:00:00Z")
	f.Fuzz(func(t *testing.T, text string) {
		var a, b []string
		Tokens(text, func(s string) { a = append(a, s) })
		Tokens(text, func(s string) { b = append(b, s) })
		if !slices.Equal(a, b) {
			t.Fatal("not deterministic")
		}
		for _, tok := range a {
			if len(tok) < minToken || len(tok) > maxToken {
				t.Fatalf("token %q outside length bounds", tok)
			}
			// Tokens are reported in a form that is itself a token, so
			// a value copied verbatim into a sink matches.
			if again := tokenSet(tok); !slices.Contains(again, tok) {
				t.Fatalf("token %q is not a token on its own (%q)", tok, again)
			}
		}
	})
}

func BenchmarkTokens(b *testing.B) {
	text := benchText(64 << 10)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Tokens(text, func(string) {})
	}
}

func TestFoldToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"sk_live_9fQ2xR7mK4pLw8Zt", "sk_live_9fq2xr7mk4plw8zt"},
		{"SK_LIVE_9FQ2XR7MK4PLW8ZT", "sk_live_9fq2xr7mk4plw8zt"},
		{"already_lower_123", "already_lower_123"},
		{"ÄBC-Ü", "Äbc-Ü"}, // ASCII letters only: tokens are ASCII
	}
	for _, tt := range tests {
		if got := FoldToken(tt.in); got != tt.want {
			t.Errorf("FoldToken(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
