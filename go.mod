module github.com/ibtracer/ibtracer_exporter

go 1.26
