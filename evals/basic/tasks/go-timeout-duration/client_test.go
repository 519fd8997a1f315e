package main

import "testing"

func TestClientHasATimeout(t *testing.T) {
	if NewClient().Timeout <= 0 {
		t.Error("no timeout")
	}
}
