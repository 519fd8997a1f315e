module example.com/abs

go 1.21
