package main

import promversion "github.com/prometheus/common/version"

func version() string { return promversion.Print("ibtracer") }
