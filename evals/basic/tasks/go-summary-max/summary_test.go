package summary

import "testing"

func TestSummary(t *testing.T) {
	if got := Summary([]int{3, 9, 4}); got != "3 scores, best 9" {
		t.Errorf("got %q", got)
	}
}
