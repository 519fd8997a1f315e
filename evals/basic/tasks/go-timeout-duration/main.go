// Command fetch downloads the day's rates; with -dry it only says how.
package main

import (
	"flag"
	"fmt"
)

func main() {
	dry := flag.Bool("dry", false, "say how it would fetch, without fetching")
	flag.Parse()
	client := NewClient()
	if *dry {
		fmt.Printf("timeout %s\n", client.Timeout)
		return
	}
	fmt.Println("fetching is not written yet")
}
