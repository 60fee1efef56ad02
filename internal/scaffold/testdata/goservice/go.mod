module example.com/goservice

go 1.26
