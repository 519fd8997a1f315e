// Package labels makes the labels printed on shelf tags.
package labels

import (
	"fmt"

	"example.com/labels/internal/textutil"
)

// Label is a shelf tag's text: the product name (10 characters at most) and the price.
func Label(name string, cents int) string {
	return fmt.Sprintf("%s %d.%02d", textutil.Truncate(name, 10), cents/100, cents%100)
}
