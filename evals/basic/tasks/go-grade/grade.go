package grade

import "fmt"

func letter(score int) string {
	switch {
	case score > 90:
		return "A"
	case score > 80:
		return "B"
	case score > 70:
		return "C"
	default:
		return "F"
	}
}

// Report says a student's letter grade.
func Report(name string, score int) string {
	return fmt.Sprintf("%s: %s", name, letter(score))
}
