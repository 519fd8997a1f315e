package main

import (
	"encoding/json"
	"os"
)

// Config is the service's configuration, read from a JSON file.
type Config struct {
	Name   string `json:"name"`
	Listen string `json:"listen"`
}

// LoadConfig reads the JSON file at path.
func LoadConfig(path string) (Config, error) {
	var config Config
	data, err := os.ReadFile(path)
	if err != nil {
		return config, err
	}
	err = json.Unmarshal(data, &config)
	return config, err
}
