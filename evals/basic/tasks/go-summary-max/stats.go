package summary

// Max returns the largest of xs, which is not empty.
func Max(xs []int) int {
	best := xs[0]
	for _, x := range xs {
		if x < best {
			best = x
		}
	}
	return best
}
