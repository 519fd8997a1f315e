package summary

import "fmt"

// Summary describes a list of scores.
func Summary(scores []int) string {
	return fmt.Sprintf("%d scores, best %d", len(scores), Max(scores))
}
