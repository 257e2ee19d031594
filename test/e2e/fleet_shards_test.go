package e2e

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/promtest"
)

// The scale-out setup of the fleet test (docs/metrics.md, "Where the
// rules run"): two Prometheus shards that split the exporters with
// hashmod relabelling and evaluate the shard layer
// (ibtracer.shard.rules.yml), and a global Prometheus that federates
// their shard:ibtracer_* series and evaluates the alerts
// (ibtracer.rules.yml). Prometheus federation rather than vmagent and
// VictoriaMetrics: a vmagent shard writes every exporter's series to one
// VictoriaMetrics, where a rule reading raw series across exporters still
// sees them all; federation gives the global layer nothing but the
// recorded series, which is what the two layers must survive.
const fleetShards = 2

// fleetView is a Prometheus whose alerts a phase of the fleet test
// watches: the single one, or the global one of the sharded setup.
type fleetView struct{ name, addr string }

// hashmodShard is the shard Prometheus's hashmod relabelling gives a
// target: the low 8 bytes of the MD5 of the source labels' values,
// joined by ";", big-endian, modulo the shards.
func hashmodShard(values string, shards int) int {
	sum := md5.Sum([]byte(values))
	return int(binary.BigEndian.Uint64(sum[8:]) % uint64(shards))
}

// shardSalt picks a salt for the hashmod of the targets' addresses that
// gives every shard at least two of them, so that no shard sees every
// exporter whatever ports the exporters got; it returns the salt and
// the targets of each shard.
func shardSalt(t *testing.T, addrs []string, shards int) (string, [][]string) {
	t.Helper()
	for salt := 0; salt < 1000; salt++ {
		split := make([][]string, shards)
		for _, a := range addrs {
			s := hashmodShard(fmt.Sprintf("%s;%d", a, salt), shards)
			split[s] = append(split[s], a)
		}
		ok := true
		for _, s := range split {
			ok = ok && len(s) >= 2
		}
		if ok {
			return fmt.Sprint(salt), split
		}
	}
	t.Fatalf("no salt splits %d targets over %d shards", len(addrs), shards)
	return "", nil
}

// startShardedPrometheus starts fleetShards shard Prometheus servers,
// each given every target and keeping its own by hashmod, with the
// shard rules, and a global Prometheus that federates their recorded
// series every second and evaluates the alerts with the site's latency
// setting (as startFleetPrometheus); all with durations divided by fleetScale.
// It waits until each shard scrapes its share of the exporters and the
// global one has their recorded series, and returns the global address.
// The global Prometheus does not keep the shards' timestamps
// (honor_timestamps: false): Prometheus 2.42 writes no staleness marker
// for a series that carried its own timestamp, so a recorded series a
// shard stopped writing stayed at the global layer for the 5-minute
// lookback, and a replugged cable's LinkDowned increment held
// IBTracerLinkErrorsRising there until it fired (docs/metrics.md,
// "Where the rules run").
func startShardedPrometheus(t *testing.T, prom string, lifetime time.Duration, addrs []string) string {
	t.Helper()
	salt, split := shardSalt(t, addrs, fleetShards)
	quoted := make([]string, len(addrs))
	for i, a := range addrs {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	var shardAddrs []string
	for s := 0; s < fleetShards; s++ {
		dir := t.TempDir()
		writeScaledRule(t, dir, "ibtracer.shard.rules.yml")
		cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
  external_labels: {shard: "%d"}
rule_files: [ibtracer.shard.rules.yml]
scrape_configs:
  - job_name: ibtracer
    static_configs:
      - targets: [%s]
    relabel_configs:
      - {target_label: __tmp_salt, replacement: "%s"}
      - {source_labels: [__address__, __tmp_salt], modulus: %d, target_label: __tmp_shard, action: hashmod}
      - {source_labels: [__tmp_shard], regex: "%d", action: keep}
`, s, strings.Join(quoted, ", "), salt, fleetShards, s)
		addr := startPrometheusIn(t, prom, lifetime, dir, cfg)
		shardAddrs = append(shardAddrs, fmt.Sprintf("%q", addr))
		want := len(split[s])
		if !poll(30*time.Second, 500*time.Millisecond, func() bool {
			n, err := promtest.Query(addr, `count_over_time(up[1m]) >= 5`)
			return err == nil && n == want
		}) {
			t.Fatalf("shard %d did not scrape its %d exporters %v", s, want, split[s])
		}
		t.Logf("shard %d (%s) scrapes %v", s, addr, split[s])
	}
	dir := t.TempDir()
	writeScaledRule(t, dir, "ibtracer.rules.yml")
	writeSiteThreshold(t, dir)
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [ibtracer.rules.yml, site.yml]
scrape_configs:
  - job_name: federate
    honor_labels: true
    honor_timestamps: false
    metrics_path: /federate
    params:
      'match[]': ['{__name__=~"shard:ibtracer_.*"}']
    static_configs:
      - targets: [%s]
`, strings.Join(shardAddrs, ", "))
	global := startPrometheusIn(t, prom, lifetime, dir, cfg)
	// Every exporter's own port, recorded by its shard, has reached the
	// global layer, from both shards.
	if !poll(30*time.Second, 500*time.Millisecond, func() bool {
		n, err := promtest.Query(global, `count by (shard) (shard:ibtracer_local_port:last1h)`)
		m, err2 := promtest.Query(global, `shard:ibtracer_local_port:last1h`)
		return err == nil && err2 == nil && n == fleetShards && m == len(addrs)
	}) {
		t.Fatalf("the global Prometheus did not federate the %d shards' series", fleetShards)
	}
	return global
}

// writeScaledRule writes the shipped rule file name into dir with every
// duration divided by fleetScale.
func writeScaledRule(t *testing.T, dir, name string) {
	t.Helper()
	writeScaledRuleBy(t, dir, name, fleetScale)
}

// writeScaledRuleBy writes the shipped rule file name into dir with every
// duration divided by factor (1: as shipped).
func writeScaledRuleBy(t *testing.T, dir, name string, factor int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "dashboards", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), scaleRules(t, b, factor), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startPrometheusIn starts Prometheus in dir with the configuration cfg
// on a free loopback port for lifetime, and returns its address.
func startPrometheusIn(t *testing.T, prom string, lifetime time.Duration, dir, cfg string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	startDaemonFor(t, lifetime, dir, prom, "--config.file=prometheus.yml", "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr)
	return addr
}

// TestHashmodShard: hashmodShard gives what Prometheus's hashmod gives
// "baz" modulo 1000 (976); startShardedPrometheus checks the split
// against real shards.
func TestHashmodShard(t *testing.T) {
	if got := hashmodShard("baz", 1000); got != 976 {
		t.Fatalf("hashmodShard(baz, 1000) = %d, want 976", got)
	}
}
