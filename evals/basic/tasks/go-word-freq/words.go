package words

// Frequencies counts the words of text: words are runs of letters or digits, compared
// case-insensitively (the keys are lower case); everything else separates them.
func Frequencies(text string) map[string]int {
	panic("not implemented")
}
