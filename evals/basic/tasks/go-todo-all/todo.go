package main

import "strings"

// Item is one line of a todo file: "[ ] buy milk" or "[x] call Ann".
type Item struct {
	Text string
	Done bool
}

// Parse reads the items of a todo file; lines that are not items are skipped.
func Parse(text string) []Item {
	var items []Item
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "[ ] "):
			items = append(items, Item{Text: line[4:]})
		case strings.HasPrefix(line, "[x] "):
			items = append(items, Item{Text: line[4:], Done: true})
		}
	}
	return items
}
