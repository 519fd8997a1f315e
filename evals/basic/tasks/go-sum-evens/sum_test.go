package sum

import "testing"

func TestSumEvens(t *testing.T) {
	if got := SumEvens([]int{1, 2, 3, 4, -6}); got != 0 {
		t.Errorf("got %d, want 0", got)
	}
	if got := SumEvens([]int{2, 8, 5}); got != 10 {
		t.Errorf("got %d, want 10", got)
	}
	if got := SumEvens(nil); got != 0 {
		t.Errorf("got %d, want 0", got)
	}
}
