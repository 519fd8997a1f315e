// Package textutil holds small string helpers.
package textutil

// Truncate shortens s to at most n characters, ending it with "…" when it was cut.
func Truncate(s string, n int) string {
	runes := []rune(s)
	if len(runes) < n {
		return s
	}
	return string(runes[:n-1]) + "…"
}
