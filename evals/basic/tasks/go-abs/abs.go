package abs

// Abs returns the absolute value of x.
func Abs(x int) int {
	if x > 0 {
		return -x
	}
	return x
}
