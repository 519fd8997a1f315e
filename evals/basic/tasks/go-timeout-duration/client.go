package main

import (
	"net/http"
	"time"
)

const defaultTimeout = 5 * time.Second

// NewClient returns the HTTP client the fetcher uses.
func NewClient() *http.Client {
	return &http.Client{Timeout: defaultTimeout}
}
