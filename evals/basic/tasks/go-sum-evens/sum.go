package sum

// SumEvens returns the sum of the even numbers in xs (negative ones included).
func SumEvens(xs []int) int {
	panic("not implemented")
}
