package labels

import "testing"

func TestLabel(t *testing.T) {
	cases := map[string]string{
		"Tea":         "Tea 2.50",
		"Marmalade":   "Marmalade 2.50",
		"Chocolatier": "Chocolati… 2.50",
		"Crème fraîc": "Crème fra… 2.50",
		"Mozzarella":  "Mozzarella 2.50",
	}
	for name, want := range cases {
		if got := Label(name, 250); got != want {
			t.Errorf("Label(%q) = %q, want %q", name, got, want)
		}
	}
}
