package grade

import "testing"

func TestReport(t *testing.T) {
	cases := map[int]string{95: "A", 90: "A", 85: "B", 80: "B", 70: "C", 12: "F"}
	for score, want := range cases {
		if got := Report("ana", score); got != "ana: "+want {
			t.Errorf("Report(ana, %d) = %q, want %q", score, got, "ana: "+want)
		}
	}
}
