// Command csvcut prints one column of the CSV read on stdin: csvcut -col 2 < file.csv
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"os"
)

// Column returns the values of column col (from 1) of records; records too short for it
// are skipped.
func Column(records [][]string, col int) []string {
	var values []string
	for _, record := range records {
		if col >= 1 && col <= len(record) {
			values = append(values, record[col-1])
		}
	}
	return values
}

func main() {
	col := flag.Int("col", 1, "the column to print, from 1")
	flag.Parse()
	reader := csv.NewReader(os.Stdin)
	reader.FieldsPerRecord = -1
	records, err := reader.ReadAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "csvcut:", err)
		os.Exit(1)
	}
	for _, v := range Column(records, *col) {
		fmt.Println(v)
	}
}
