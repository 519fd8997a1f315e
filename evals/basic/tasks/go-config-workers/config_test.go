package main

import "testing"

func TestLoad(t *testing.T) {
	config := Load()
	if config.Workers < 1 || config.QueueSize < config.Workers {
		t.Errorf("bad config %+v", config)
	}
}
