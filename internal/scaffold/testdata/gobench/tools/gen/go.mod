module example.com/codec/tools/gen

go 1.26
