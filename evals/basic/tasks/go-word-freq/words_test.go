package words

import (
	"reflect"
	"testing"
)

func TestFrequencies(t *testing.T) {
	got := Frequencies("The cat, the HAT -- and the café's 2 cats!")
	want := map[string]int{"the": 3, "cat": 1, "hat": 1, "and": 1, "café": 1, "s": 1, "2": 1, "cats": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := Frequencies("  ...  "); len(got) != 0 {
		t.Errorf("got %v for no words", got)
	}
}
