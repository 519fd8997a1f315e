package abs

import "testing"

func TestAbs(t *testing.T) {
	for in, want := range map[int]int{-3: 3, 0: 0, 5: 5} {
		if got := Abs(in); got != want {
			t.Errorf("Abs(%d) = %d, want %d", in, got, want)
		}
	}
}
