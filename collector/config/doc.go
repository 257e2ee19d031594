// Package config reads the exporter's configuration file: strict YAML
// (an unknown key is an error), every key left out given its default,
// and validation whose errors name the file, the line and the field
// (*Error). config.example.yml in the repository shows every key.
//
// Load reads a file; Parse reads bytes, naming them as a file in errors:
//
//	c, err := config.Parse("exporter.yml", []byte("interval: 30s\ndestinations:\n  - {name: sw1, lid: 4}\n"))
//	if err != nil {
//		log.Fatal(err) // exporter.yml:3: destinations[0] (sw1).lid: ...
//	}
//	for _, d := range c.Destinations {
//		fmt.Println(d.Name, d.Target().LID, time.Duration(d.Interval)) // sw1 4 30s
//	}
//
// A destination names its port by lid:, gid:, guid: or node: (with
// port:), read once by trace.ParseDestination; Target returns it parsed.
// mlid: with lid: makes it a multicast destination (Multicast,
// MulticastAddress), and paths: all traces every LID of the port's LMC
// range (AllPaths). discover: selectors (Selector) pick destinations
// from the ports the SA knows.
//
// TraceOptions is the one translation of the file into trace.Options;
// the health: and evidence: sections are read into HealthConfig.Options
// (linkhealth.Options) and EvidenceConfig. Check is the exporter's
// --config.check: Load, returning only the first error.
package config
