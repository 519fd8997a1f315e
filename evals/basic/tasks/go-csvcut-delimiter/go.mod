module example.com/csvcut

go 1.21
