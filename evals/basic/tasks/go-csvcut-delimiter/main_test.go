package main

import (
	"reflect"
	"testing"
)

func TestColumn(t *testing.T) {
	got := Column([][]string{{"a", "b"}, {"1", "2"}, {"x"}}, 2)
	if !reflect.DeepEqual(got, []string{"b", "2"}) {
		t.Errorf("got %q", got)
	}
}
