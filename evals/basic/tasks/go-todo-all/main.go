// Command todo lists the open items of a todo file: todo FILE
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: todo FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "todo:", err)
		os.Exit(1)
	}
	for i, item := range Parse(string(data)) {
		if !item.Done {
			fmt.Printf("%d. [ ] %s\n", i+1, item.Text)
		}
	}
}
