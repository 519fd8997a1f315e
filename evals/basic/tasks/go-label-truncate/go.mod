module example.com/labels

go 1.21
