module example.com/wrap

go 1.21
