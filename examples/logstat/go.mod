module example.com/logstat

go 1.22
