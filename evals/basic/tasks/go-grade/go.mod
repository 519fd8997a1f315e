module example.com/grade

go 1.21
