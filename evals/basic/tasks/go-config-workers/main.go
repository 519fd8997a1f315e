// Command jobs runs queued jobs; for now it prints how it would start.
package main

import "fmt"

func main() {
	config := Load()
	fmt.Printf("workers=%d queue=%d\n", config.Workers, config.QueueSize)
}
