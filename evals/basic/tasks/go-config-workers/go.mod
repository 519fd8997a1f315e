module example.com/jobs

go 1.21
