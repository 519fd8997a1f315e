package main

import (
	"reflect"
	"testing"
)

func TestWrap(t *testing.T) {
	got := Wrap("the quick brown fox jumps", 10)
	want := []string{"the quick", "brown fox", "jumps"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
