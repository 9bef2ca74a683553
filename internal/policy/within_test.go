package policy

import "testing"

func TestWithin(t *testing.T) {
	tests := []struct {
		p, dir string
		want   bool
	}{
		{"/home/u/projects", "/home/u/projects", true},
		{"/home/u/projects/a", "/home/u/projects", true},
		{"/home/u/projects2", "/home/u/projects", false},
		{"/home/u/projects-evil/a", "/home/u/projects", false},
		{"/home/u", "/home/u/projects", false},
		{"/anything", "/", true},
		{"/", "/", true},
		{"/home/u/projectsa", "/home/u/projects", false},
	}
	for _, tt := range tests {
		if got := within(tt.p, tt.dir); got != tt.want {
			t.Errorf("within(%q, %q) = %v", tt.p, tt.dir, got)
		}
	}
}
