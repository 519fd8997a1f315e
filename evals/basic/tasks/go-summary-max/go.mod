module example.com/summary

go 1.21
