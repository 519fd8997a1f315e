// Command wrap reads text on stdin and prints it wrapped at 40 columns.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Wrap breaks text into lines of at most width characters, between words (a longer
// word gets a line of its own).
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func main() {
	text, err := io.ReadAll(bufio.NewReader(os.Stdin))
	if err != nil {
		fmt.Fprintln(os.Stderr, "wrap:", err)
		os.Exit(1)
	}
	for _, line := range Wrap(string(text), 40) {
		fmt.Println(line)
	}
}
