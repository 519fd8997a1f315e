package main

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	got := Parse("# groceries\n[ ] milk\n[x] bread\n")
	want := []Item{{Text: "milk"}, {Text: "bread", Done: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
