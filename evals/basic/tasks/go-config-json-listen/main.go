package main

import (
	"fmt"
	"os"
)

func main() {
	config, err := LoadConfig("config.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
	fmt.Printf("%s listening on %s\n", config.Name, config.Listen)
}
